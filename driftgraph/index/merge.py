"""Per-chunk extractions -> one graph: entities by normalised title + type, relationships by endpoint pair.

Ids are hashes of the merge keys, so the same input always gives the same ids and an entity keeps its id
when documents are added or removed. A relationship endpoint the model did not list as an entity resolves
to the entity of that title (its most frequent type), else becomes an untyped entity. Description lists
that exceed ``index.description_max_tokens`` are summarised by the LLM under that cap.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from driftgraph.config import Config
from driftgraph.index.chunk import Chunk
from driftgraph.index.extract import ChunkExtraction
from driftgraph.llm.chat import ChatClient
from driftgraph.llm.tokenizer import count_tokens, truncate_tokens
from driftgraph.parallel import parallel_map
from driftgraph.prompts import render_prompt

_SPACE = re.compile(r"\s+")
_EDGE_PUNCT = "\"'`“”‘’«»()[]{}<>.,;:"


def norm_title(title: str) -> str:
    """The merge key and displayed title: NFKC, outer quotes/punctuation off, one space, upper case."""
    t = unicodedata.normalize("NFKC", title)
    t = _SPACE.sub(" ", t).strip().strip(_EDGE_PUNCT).strip()
    return t.upper()


def norm_type(kind: str) -> str:
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", kind)).strip().strip(_EDGE_PUNCT).upper()


def _hid(*parts: str) -> str:
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:32]


def entity_id(title: str, kind: str) -> str:
    return _hid("entity", title, kind)


@dataclass
class Entity:
    id: str
    title: str
    type: str
    descriptions: list[str] = field(default_factory=list)
    text_unit_ids: list[str] = field(default_factory=list)
    description: str = ""
    degree: int = 0

    @property
    def frequency(self) -> int:
        return len(self.text_unit_ids)


@dataclass
class Relationship:
    id: str
    source_id: str
    target_id: str
    source: str
    target: str
    weight: float = 0.0
    descriptions: list[str] = field(default_factory=list)
    text_unit_ids: list[str] = field(default_factory=list)
    description: str = ""
    combined_degree: int = 0


@dataclass
class Claim:
    id: str
    subject_id: str | None
    object_id: str | None
    subject: str
    object: str
    type: str
    status: str
    start_date: str
    end_date: str
    description: str
    source_text: str
    chunk_id: str


@dataclass
class Graph:
    entities: list[Entity]
    relationships: list[Relationship]
    claims: list[Claim]


def _add_unique(items: list[str], value: str) -> None:
    value = value.strip()
    if value and value not in items:
        items.append(value)


def merge(chunks: Sequence[Chunk], extractions: Sequence[ChunkExtraction]) -> Graph:
    """Pure and deterministic: chunks in document order, records in answer order."""
    order = {c.id: i for i, c in enumerate(chunks)}
    exts = sorted((e for e in extractions if e.chunk_id in order), key=lambda e: order[e.chunk_id])
    entities: dict[tuple[str, str], Entity] = {}
    type_counts: dict[str, Counter[str]] = defaultdict(Counter)

    def entity(title: str, kind: str, chunk_id: str) -> Entity:
        ent = entities.get((title, kind))
        if ent is None:
            ent = entities[(title, kind)] = Entity(entity_id(title, kind), title, kind)
        if chunk_id not in ent.text_unit_ids:
            ent.text_unit_ids.append(chunk_id)
        return ent

    for ext in exts:
        for rec in ext.entities:
            title, kind = norm_title(rec.title), norm_type(rec.type)
            if title:
                _add_unique(entity(title, kind, ext.chunk_id).descriptions, rec.description)
                type_counts[title][kind] += 1

    def resolve(title: str, local: dict[str, str], chunk_id: str) -> Entity | None:
        title = norm_title(title)
        if not title:
            return None
        kind = local.get(title)
        if kind is None:
            counts = type_counts.get(title)
            kind = min(counts, key=lambda k: (-counts[k], k)) if counts else ""
        return entity(title, kind, chunk_id)

    rels: dict[tuple[str, str], Relationship] = {}
    claims: list[Claim] = []
    for ext in exts:
        local: dict[str, str] = {}
        for rec in ext.entities:
            local.setdefault(norm_title(rec.title), norm_type(rec.type))
        for r in ext.relationships:
            src, tgt = resolve(r.source, local, ext.chunk_id), resolve(r.target, local, ext.chunk_id)
            if src is None or tgt is None or src.id == tgt.id:
                continue
            key = (min(src.id, tgt.id), max(src.id, tgt.id))
            rel = rels.get(key)
            if rel is None:
                rel = rels[key] = Relationship(_hid("relationship", *key), src.id, tgt.id, src.title, tgt.title)
            rel.weight += r.strength
            _add_unique(rel.descriptions, r.description)
            if ext.chunk_id not in rel.text_unit_ids:
                rel.text_unit_ids.append(ext.chunk_id)
        for i, c in enumerate(ext.claims):
            s_title = norm_title(c.subject)
            subj = entities.get((s_title, local[s_title])) if s_title in local else None
            subj = subj or _by_title(entities, type_counts, s_title)
            obj = _by_title(entities, type_counts, norm_title(c.object))
            claims.append(
                Claim(
                    _hid("claim", ext.chunk_id, str(i)),
                    subj.id if subj else None,
                    obj.id if obj else None,
                    norm_title(c.subject),
                    norm_title(c.object) or "NONE",
                    norm_type(c.type),
                    c.status.upper(),
                    c.start_date,
                    c.end_date,
                    c.description,
                    c.source_text,
                    ext.chunk_id,
                )
            )
    ents = sorted(entities.values(), key=lambda e: e.id)
    relationships = sorted(rels.values(), key=lambda r: r.id)
    neighbours: dict[str, set[str]] = defaultdict(set)
    for rel in relationships:
        neighbours[rel.source_id].add(rel.target_id)
        neighbours[rel.target_id].add(rel.source_id)
    for e in ents:
        e.degree = len(neighbours[e.id])
    degree = {e.id: e.degree for e in ents}
    for rel in relationships:
        rel.combined_degree = degree[rel.source_id] + degree[rel.target_id]
    return Graph(ents, relationships, claims)


def _by_title(entities: dict[tuple[str, str], Entity], types: dict[str, Counter[str]], title: str) -> Entity | None:
    counts = types.get(title)
    if not counts:
        return None
    return entities.get((title, min(counts, key=lambda k: (-counts[k], k))))


def summarize_descriptions(
    graph: Graph, chat: ChatClient, cfg: Config, on_done: Callable[[], None] | None = None
) -> dict[str, Any]:
    """Set every ``description`` (joined, or summarised when too long); returns counts and failures."""
    enc = cfg.tokenizer.encoding
    cap = cfg.index.description_max_tokens
    todo: list[tuple[str, str, Entity | Relationship]] = []
    for e in graph.entities:
        e.description = "\n".join(e.descriptions)
        if len(e.descriptions) > 1 and count_tokens(e.description, enc) > cap:
            todo.append(("entity", e.title, e))
    for r in graph.relationships:
        r.description = "\n".join(r.descriptions)
        if len(r.descriptions) > 1 and count_tokens(r.description, enc) > cap:
            todo.append(("relationship", f"{r.source} -> {r.target}", r))
    failures: list[str] = []
    from driftgraph.errors import FatalLLMError, LLMError

    def run(item: tuple[str, str, Entity | Relationship]) -> None:
        kind, name, target = item
        joined = truncate_tokens(
            "\n".join(f"- {d}" for d in target.descriptions), cfg.index.summarize_input_max_tokens, enc
        )
        prompt = render_prompt(
            "summarize_descriptions",
            cfg.prompts,
            kind=kind,
            title=name,
            descriptions=joined,
            max_words=max(10, cap * 3 // 4),
        )
        text = ""
        try:
            text = chat.complete([{"role": "user", "content": prompt}], phase="summarize", max_tokens=cap).text.strip()
        except FatalLLMError:
            raise
        except LLMError as err:  # an endpoint error keeps the joined text, listed as a failure
            if chat.endpoint_down():
                raise
            failures.append(f"summarize {kind} {name}: {err}")
        target.description = truncate_tokens(text or target.description, cap, enc)

    parallel_map(run, todo, cfg.index.concurrency, on_done)
    return {"summarized": len(todo), "failures": failures}
