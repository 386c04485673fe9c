"""Schema bootstrap and the DriftgraphMeta check that guards against mixing embedders."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from driftgraph.config import VectorIndexConfig
from driftgraph.errors import SchemaMismatch
from driftgraph.store.db import Store

SCHEMA_VERSION = 1
VECTOR_INDEXES = ("entity_embedding", "chunk_embedding", "community_embedding")
FULLTEXT_INDEXES = ("entity_fulltext", "chunk_fulltext")


@dataclass(frozen=True)
class Meta:
    schema_version: int
    embedder: str
    dimensions: int
    filled_by: str | None = None


def read_meta(store: Store) -> Meta | None:
    rows = store.read("schema/read_meta")
    if not rows:
        return None
    r = rows[0]
    return Meta(int(r["schema_version"]), str(r["embedder"]), int(r["dimensions"]), r.get("filled_by"))


def mark_filled_by(store: Store, writer: str) -> None:
    """Record which writer filled the database (after ``ensure_schema``)."""
    store.run("schema/mark_filled_by", filled_by=writer)


def check_meta(store: Store, embedder: str, dimensions: int) -> Meta | None:
    """Fail, naming both sides, when the database was built with another embedder or dimension."""
    meta = read_meta(store)
    if meta is None:
        return None
    if meta.schema_version > SCHEMA_VERSION:
        raise SchemaMismatch(
            f"database schema version {meta.schema_version} is newer than this driftgraph "
            f"({SCHEMA_VERSION}); upgrade driftgraph"
        )
    if (meta.embedder, meta.dimensions) != (embedder, dimensions):
        raise SchemaMismatch(
            f"database was built with embedder '{meta.embedder}' ({meta.dimensions}-d) but the config uses "
            f"'{embedder}' ({dimensions}-d): change embeddings.* back, or re-import with --reset"
        )
    return meta


def ensure_schema(store: Store, embedder: str, dimensions: int, hnsw: VectorIndexConfig | None = None) -> None:
    """Idempotent: constraints, fulltext and vector indexes (``hnsw`` applies to the ones created here; an
    index that exists keeps its settings), then the meta node.

    Indexes are made before any row is written, also for a bulk load: Neo4j 5.26 populated them afterwards
    no faster than it updates them per row (measured: bench/results/raw/bulk_import.json, "deferred")."""
    check_meta(store, embedder, dimensions)
    hnsw = hnsw or VectorIndexConfig()
    store.run_auto("schema/constraints")
    store.run_auto("schema/fulltext")
    store.run_auto("schema/vector_indexes", dimensions=dimensions, m=hnsw.m, ef_construction=hnsw.ef_construction)
    store.run("schema/write_meta", schema_version=SCHEMA_VERSION, embedder=embedder, dimensions=dimensions)


def describe_indexes(store: Store) -> dict[str, dict[str, Any]]:
    return {r["name"]: r for r in store.read("schema/list_indexes")}


def schema_status(store: Store) -> dict[str, Any]:
    """What doctor reports: meta, and which of our indexes exist with which dimensions."""
    meta = read_meta(store)
    indexes = describe_indexes(store)
    missing = [n for n in (*VECTOR_INDEXES, *FULLTEXT_INDEXES) if n not in indexes]
    dims = {n: indexes[n]["dimensions"] for n in VECTOR_INDEXES if n in indexes}
    consistent = meta is not None and not missing and all(d == meta.dimensions for d in dims.values())
    return {
        "ok": consistent,
        "schema_version": meta.schema_version if meta else None,
        "embedder": meta.embedder if meta else None,
        "dimensions": meta.dimensions if meta else None,
        "vector_indexes": dims,
        "missing": missing,
    }
