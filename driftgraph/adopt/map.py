"""driftgraph's lexical model next to the other tool's: labels, ids, links, document and chunk properties, and
our indexes. Nothing the other tool wrote is changed.

Ownership: every node records in ``driftgraph_props`` the properties driftgraph added to it (those absent when
adopt first saw the node). A re-run writes only those, so a property the other tool set is never overwritten,
even when driftgraph would have named it the same (``title``, ``description``, ``embedding``).

Vectors: driftgraph keeps one vector per node in ``embedding``. Where the other tool already stored one there
(neo4j-graphrag's chunk embedder, LLM Graph Builder's chunk and entity vectors), driftgraph reuses it, which
needs the same embedding model (checked: the same dimension). Its own vector index may then already cover
that property under another name; our index of the same name is made on an alias label
(``__DriftgraphChunk__`` ...) that adopt puts on those nodes, so every query mode finds it by name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from driftgraph.errors import AdoptError
from driftgraph.store.db import Store
from driftgraph.store.ingest import batched
from driftgraph.store.schema import FULLTEXT_INDEXES, VECTOR_INDEXES, describe_indexes

Row = dict[str, Any]
OWNED = "driftgraph_props"
# our index name -> the alias label statement that puts the label on the nodes it must cover
ALIAS_LABEL = {
    "chunk_embedding": "adopt/alias_chunk_label",
    "chunk_fulltext": "adopt/alias_chunk_label",
    "entity_embedding": "adopt/alias_entity_label",
    "entity_fulltext": "adopt/alias_entity_label",
    "community_embedding": "adopt/alias_community_label",
}


@dataclass
class ChunkText:
    id: str
    text: str
    document_id: str | None


def owned_update(node: Row, wanted: Row, claim: Iterable[str] = ("embedding",)) -> tuple[Row, list[str]]:
    """(properties to set, new ownership list) for one node: only what driftgraph added, never the rest."""
    keys = set(node.get("keys") or [])
    owned = set(node.get("owned") or []) | {k for k in (*wanted, *claim) if k not in keys}
    return {k: v for k, v in wanted.items() if k in owned}, sorted(owned)


def write_owned(store: Store, rows: Iterable[Row], batch_size: int) -> int:
    """Rows ``{eid, props, owned}`` onto existing nodes, one transaction per batch."""
    done = 0
    for batch in batched(rows, batch_size):
        result = store.run("adopt/set_props", rows=batch)
        done += int(result[0]["written"]) if result else 0
    return done


def check_vectors(kind: str, label: str, nodes: Sequence[Row], dimensions: int, source: str) -> int:
    """How many ``nodes`` hold the other tool's vector; fail when its size is not the embedder's."""
    foreign = [n for n in nodes if n.get("dims") is not None and "embedding" not in (n.get("owned") or [])]
    sizes = sorted({int(n["dims"]) for n in foreign})
    if sizes and sizes != [dimensions]:
        raise AdoptError(
            f"{label}.embedding holds {'/'.join(map(str, sizes))}-d vectors written by {source}, but driftgraph's "
            f"embedder gives {dimensions}-d: configure embeddings.* to the model that tool used "
            f"(driftgraph reuses those {kind} vectors and cannot keep a second one in the same property)"
        )
    return len(foreign)


def link(store: Store) -> dict[str, int]:
    """Our labels, ids and links next to the other tool's (each statement only adds)."""

    def written(rows: list[Row]) -> int:
        return int(rows[0]["written"]) if rows else 0

    return {
        "label_entities": written(store.run("adopt/label_entities")),
        "add_ids": written(store.run("adopt/add_ids")),
        "part_of": written(store.run("adopt/part_of")),
        "has_entity": written(store.run("adopt/has_entity")),
    }


def fill_documents(store: Store, batch_size: int) -> int:
    """``title`` (``fileName``, else the file name of ``path``), ``human_readable_id``, where missing."""
    rows = []
    for i, d in enumerate(store.read("adopt/read_documents")):
        title = d["title"] or d["file_name"] or (PurePath(str(d["path"])).name if d["path"] else d["id"])
        props, owned = owned_update(d, {"title": str(title), "human_readable_id": i}, claim=())
        rows.append({"eid": d["eid"], "props": props, "owned": owned})
    return write_owned(store, rows, batch_size)


def fill_chunks(
    store: Store, tokens: Callable[[str], int], dimensions: int, source: str, batch_size: int
) -> tuple[list[ChunkText], int]:
    """``position``, ``n_tokens``, ``human_readable_id`` on every chunk; returns the chunk texts and how many
    chunks hold the other tool's vector."""
    nodes = store.read("adopt/read_chunks")
    foreign = check_vectors("chunk", "Chunk", nodes, dimensions, source)
    rows, texts = [], []
    for i, c in enumerate(nodes):
        text = c["text"] if isinstance(c["text"], str) else ""
        wanted = {"position": c["position"], "n_tokens": tokens(text), "human_readable_id": i}
        props, owned = owned_update(c, wanted)
        rows.append({"eid": c["eid"], "props": props, "owned": owned})
        texts.append(ChunkText(str(c["id"]), text, c["document_id"]))
    write_owned(store, rows, batch_size)
    return texts, foreign


def ensure_indexes(store: Store, dimensions: int) -> list[str]:
    """After ``ensure_schema``: our indexes that another tool's equivalent one kept from being made are made on
    alias labels. Returns their names (the alias labels must be refreshed after each write)."""
    have = describe_indexes(store)
    aliased = []
    for name in (*VECTOR_INDEXES, *FULLTEXT_INDEXES):
        info = have.get(name)
        if info is not None and not str((info["labelsOrTypes"] or [""])[0]).startswith("__Driftgraph"):
            continue  # ours, on driftgraph's own label
        if info is None:
            params = {"dimensions": dimensions} if name in VECTOR_INDEXES else {}
            store.run_auto(f"adopt/alias_{name}", **params)
        aliased.append(name)
    refresh_aliases(store, aliased)
    return aliased


def refresh_aliases(store: Store, aliased: Sequence[str]) -> None:
    """Put the alias labels on nodes written since (new chunks, entities, communities)."""
    for statement in sorted({ALIAS_LABEL[name] for name in aliased}):
        store.run(statement)
