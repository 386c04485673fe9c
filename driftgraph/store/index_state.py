"""What the indexer needs beyond the shared writers (store/ingest.py): read the current ids for the
incremental diff, delete by id what removed or changed input contributed, reuse stored reports."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from driftgraph.store.db import Store
from driftgraph.store.ingest import batched

DELETABLE = ("chunks", "entities", "relationships", "claims", "communities")
_DELETE = {"communities": "ingest/delete_communities_by_id"}


def read_state(store: Store) -> dict[str, Any]:
    """Ids per kind; relationships as ``{id: (source_id, target_id)}``; ``numbers``: per kind the stored
    ``{id: human_readable_id}`` (None where an item has none), which a run keeps for the ids it writes again."""
    rows = store.read("ingest/index_state")
    row = rows[0] if rows else {}
    out: dict[str, Any] = {}
    numbers: dict[str, dict[str, int | None]] = {}
    for kind in ("documents", "chunks", "entities", "claims"):
        numbers[kind] = {pair[0]: pair[1] for pair in row.get(kind) or []}
        out[kind] = set(numbers[kind])
    out["communities"] = set(row.get("communities") or [])
    rels = row.get("relationships") or []
    out["relationships"] = {r[0]: (r[1], r[2]) for r in rels}
    numbers["relationships"] = {r[0]: r[3] for r in rels}
    out["numbers"] = numbers
    return out


def delete_by_id(store: Store, kind: str, ids: Iterable[str], batch_size: int) -> int:
    """Delete nodes (or RELATED relationships) of ``kind`` by id, one transaction per batch."""
    if kind not in DELETABLE:
        raise ValueError(f"kind must be one of {DELETABLE}, not {kind!r}")
    name = _DELETE.get(kind, f"ingest/delete_{kind}")
    done = 0
    for batch in batched(({"id": i} for i in sorted(ids)), batch_size):
        result = store.run(name, rows=batch)
        done += int(result[0]["written"]) if result else 0
    return done


def clear_community_parents(store: Store, ids: Iterable[str], batch_size: int) -> None:
    for batch in batched(({"id": i} for i in sorted(ids)), batch_size):
        store.run("ingest/clear_community_parents", rows=batch)


def prune_entity_mentions(store: Store, rows: Iterable[dict[str, Any]], batch_size: int) -> int:
    """Rows ``{id, text_unit_ids}``: remove HAS_ENTITY links from chunks not listed any more."""
    done = 0
    for batch in batched(({"id": r["id"], "text_unit_ids": r["text_unit_ids"]} for r in rows), batch_size):
        result = store.run("ingest/prune_entity_mentions", rows=batch)
        done += int(result[0]["written"]) if result else 0
    return done


def stored_reports(store: Store, ids: Iterable[str]) -> list[dict[str, Any]]:
    return store.read("ingest/community_reports_by_id", ids=sorted(ids))


def stored_partition(store: Store) -> list[dict[str, Any]]:
    """Every community with its members and graph basis (read before entities are deleted)."""
    return store.read("ingest/community_partition")


def write_community_bases(store: Store, rows: Iterable[dict[str, Any]], batch_size: int) -> None:
    for batch in batched(rows, batch_size):
        store.run("ingest/community_bases", rows=batch)
