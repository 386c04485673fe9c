"""The other tool's entities and typed relations as driftgraph's ``Graph`` (index/merge.py), so communities and
reports reuse the indexer's own stages; entity properties and ``RELATED`` edges are written from it.

- title: the entity's ``title``, else ``name`` (neo4j-graphrag), else ``id`` (LLM Graph Builder);
- type: its ``type`` property, else its first label that is not a marker (``Person`` -> ``PERSON``);
- description: its ``description`` property, else a summary of the relations and the chunks that mention it
  (``prompts/adopt_describe_entity.txt``), redone only when those chunks or relations change;
- ``RELATED``: one per ordered entity pair, summarising every typed relation between them (their
  ``description`` if they carry one, else ``source TYPE target``); weight = their summed ``weight`` (1 each
  by default); text units = the chunks that mention both ends.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from driftgraph.adopt.map import ChunkText, owned_update, write_owned
from driftgraph.config import Config
from driftgraph.errors import FatalLLMError, LLMError
from driftgraph.index.merge import Entity, Graph, Relationship
from driftgraph.llm.chat import ChatClient
from driftgraph.llm.tokenizer import truncate_tokens
from driftgraph.parallel import parallel_map
from driftgraph.prompts import render_prompt
from driftgraph.store import ingest
from driftgraph.store.db import Store
from driftgraph.store.index_state import delete_by_id

Row = dict[str, Any]
MARKER_LABELS = {"__Entity__", "__KGBuilder__", "__DriftgraphEntity__"}


def _hash(*parts: str) -> str:
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:32]


@dataclass
class Adopted:
    """One entity as adopt sees it: the node row and what driftgraph will own on it."""

    node: Row
    entity: Entity
    foreign_description: bool
    relations: list[str] = field(default_factory=list)
    describe: bool = False


def entity_type(node: Row) -> str:
    if node["type"] is not None and "type" not in (node["owned"] or []):
        return str(node["type"])
    labels = sorted(label for label in node["labels"] if label not in MARKER_LABELS)
    return labels[0].upper() if labels else "ENTITY"


def entity_title(node: Row) -> str:
    if node["title"] is not None and "title" not in (node["owned"] or []):
        return str(node["title"])
    return str(node["name"] if node["name"] is not None else node["id"])


def read_graph(store: Store) -> tuple[list[Adopted], Graph]:
    """Entities (descriptions still to be decided) and RELATED summaries with degrees filled in."""
    adopted: dict[str, Adopted] = {}
    for node in store.read("adopt/read_entities"):
        foreign = node["description"] is not None and "description" not in (node["owned"] or [])
        e = Entity(
            str(node["id"]),
            entity_title(node),
            entity_type(node),
            text_unit_ids=sorted(str(c) for c in node["chunk_ids"]),
            description=str(node["description"]) if foreign else "",
        )
        adopted[e.id] = Adopted(node, e, foreign)
    pairs: dict[tuple[str, str], Relationship] = {}
    for r in store.read("adopt/read_relations"):
        s, t = adopted.get(str(r["source_id"])), adopted.get(str(r["target_id"]))
        if s is None or t is None:
            continue
        line = f"{s.entity.title} {r['type']} {t.entity.title}"
        text = str(r["description"]) if r["description"] else line
        rel = pairs.get((s.entity.id, t.entity.id))
        if rel is None:
            shared = sorted(set(s.entity.text_unit_ids) & set(t.entity.text_unit_ids))
            rel = Relationship(
                "adopt:" + _hash(s.entity.id, t.entity.id), s.entity.id, t.entity.id, s.entity.title,
                t.entity.title, text_unit_ids=shared,
            )  # fmt: skip
            pairs[(s.entity.id, t.entity.id)] = rel
        weight = r["weight"]
        rel.weight += float(weight) if isinstance(weight, int | float) and not isinstance(weight, bool) else 1.0
        if text not in rel.descriptions:
            rel.descriptions.append(text)
        s.relations.append(line)
        t.relations.append(line)
    rels = [pairs[k] for k in sorted(pairs)]
    degree: dict[str, int] = defaultdict(int)
    for rel in rels:
        rel.description = "; ".join(rel.descriptions)
        degree[rel.source_id] += 1
        degree[rel.target_id] += 1
    for a in adopted.values():
        a.entity.degree = degree[a.entity.id]
    for rel in rels:
        rel.combined_degree = degree[rel.source_id] + degree[rel.target_id]
    return list(adopted.values()), Graph([a.entity for a in adopted.values()], rels, [])


def _described_from(a: Adopted) -> str:
    return _hash(a.entity.title, a.entity.type, *a.entity.text_unit_ids, "\x01", *sorted(a.relations))


def describe(
    adopted: Sequence[Adopted], chunks: dict[str, ChunkText], chat: ChatClient, cfg: Config,
    on_done: Callable[[], None] | None = None,
) -> dict[str, Any]:  # fmt: skip
    """Descriptions for entities without one of their own: kept while their evidence is unchanged, else
    summarised by the LLM (an endpoint error keeps the relation lines, listed as a failure)."""
    enc, cap = cfg.tokenizer.encoding, cfg.index.description_max_tokens
    todo = []
    for a in adopted:
        if a.foreign_description:
            continue
        stored = a.node["description"]
        if stored is not None and a.node["described_from"] == _described_from(a):
            a.entity.description = str(stored)
        elif not a.relations and not a.entity.text_unit_ids:
            a.entity.description = ""  # nothing to describe it from: no LLM call
            a.describe = stored != ""
        else:
            a.describe = True
            todo.append(a)
    failures: list[str] = []

    def run(a: Adopted) -> None:
        lines = [f"- {line}" for line in sorted(set(a.relations))]
        lines += [chunks[c].text for c in a.entity.text_unit_ids if c in chunks]
        data = truncate_tokens("\n".join(lines), cfg.index.summarize_input_max_tokens, enc)
        prompt = render_prompt(
            "adopt_describe_entity", cfg.prompts, title=a.entity.title, type=a.entity.type.lower(), data=data,
            max_words=max(10, cap * 3 // 4),
        )  # fmt: skip
        try:
            text = chat.complete([{"role": "user", "content": prompt}], phase="describe", max_tokens=cap).text
        except FatalLLMError:
            raise
        except LLMError as err:
            if chat.endpoint_down():
                raise
            failures.append(f"describe entity {a.entity.title}: {err}")
            text = "; ".join(sorted(set(a.relations)))
        a.entity.description = truncate_tokens(text.strip(), cap, enc)

    parallel_map(run, todo, cfg.index.concurrency, on_done)
    return {"described": len(todo), "failures": failures}


def write_entities(store: Store, adopted: Sequence[Adopted], tokens: Callable[[str], int], batch_size: int) -> int:
    """driftgraph's entity properties onto the nodes, each only where driftgraph owns it."""
    rows = []
    for i, a in enumerate(adopted):
        e = a.entity
        wanted: Row = {
            "title": e.title, "type": e.type, "degree": e.degree, "frequency": e.frequency,
            "n_tokens": tokens(ingest.entity_token_text(e.title, e.description)), "human_readable_id": i,
        }  # fmt: skip
        if not a.foreign_description:
            wanted["description"] = e.description
            wanted["driftgraph_described_from"] = _described_from(a)
        props, owned = owned_update(a.node, wanted)
        changed = a.node["title"] != e.title or (a.describe and a.node["description"] != e.description)
        if changed and "embedding" in owned and a.node["dims"] is not None:
            props["embedding"] = None  # our vector of an old text: the embed stage redoes it
        rows.append({"eid": a.node["eid"], "props": props, "owned": owned})
    return write_owned(store, rows, batch_size)


def write_related(store: Store, graph: Graph, tokens: Callable[[str], int], batch_size: int) -> dict[str, int]:
    """RELATED edges (ours only: ids start with ``adopt:``); the ones whose pair lost its relations go."""
    from driftgraph.index.write import relationship_rows

    current = {r.id for r in graph.relationships}
    rows = store.read("adopt/related_ids")
    stale = set(rows[0]["ids"] if rows else []) - current
    removed = delete_by_id(store, "relationships", stale, batch_size)
    written = ingest.write_relationships(store, relationship_rows(graph), batch_size, tokens)
    return {"written": written, "removed": removed}
