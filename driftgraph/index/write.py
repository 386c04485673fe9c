"""The indexer's results as rows for the shared writers (store/ingest.py), and the incremental sync.

Sync = delete what the database holds that this run did not produce (removed or changed documents, and
whatever only they contributed), then write everything produced (idempotent MERGE on ids; unchanged
texts keep their embeddings). Deleting first also clears relationships whose stored direction changed,
since a RELATED id is unique.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from driftgraph.index.chunk import Chunk
from driftgraph.index.communities import Community
from driftgraph.index.formats.place import spans_json
from driftgraph.index.load import Document
from driftgraph.index.merge import Graph
from driftgraph.index.partition import Previous
from driftgraph.index.reports import Report
from driftgraph.store import ingest
from driftgraph.store.db import Store
from driftgraph.store.index_state import (
    clear_community_parents,
    delete_by_id,
    prune_entity_mentions,
    stored_partition,
    write_community_bases,
)

Row = dict[str, Any]


class Numbering:
    """``human_readable_id``s that survive re-indexing: an id keeps the number stored for it, a new id gets
    the next number never used, in the order asked. Without this, numbering each run's output from 0 shifted
    every item after an insertion, and GraphRAG-style citations (``[Data: Entities (12)]``) made against an
    export pointed elsewhere after the next run."""

    def __init__(self, stored: dict[str, int | None] | None = None) -> None:
        self._numbers = {k: v for k, v in (stored or {}).items() if v is not None}
        self._next = max(self._numbers.values(), default=-1) + 1

    def __call__(self, item_id: str) -> int:
        number = self._numbers.get(item_id)
        if number is None:
            number = self._numbers[item_id] = self._next
            self._next += 1
        return number


def document_rows(docs: Sequence[Document], number: Numbering | None = None) -> list[Row]:
    number = number or Numbering()
    return [
        {
            "id": d.id,
            "title": d.title,
            "text": d.text,
            "metadata": d.metadata,
            "spans": spans_json(d.spans),
            "creation_date": None,
            "human_readable_id": number(d.id),
        }
        for d in docs
    ]


def chunk_rows(chunks: Sequence[Chunk], number: Numbering | None = None) -> list[Row]:
    number = number or Numbering()
    return [
        {
            "id": c.id,
            "text": c.text,
            "n_tokens": c.n_tokens,
            "document_id": c.document_id,
            "position": c.index,
            "location": c.location,
            "keep_location": c.keep_location,
            "human_readable_id": number(c.id),
        }
        for c in chunks
    ]


def entity_rows(graph: Graph, number: Numbering | None = None) -> list[Row]:
    number = number or Numbering()
    return [
        {
            "id": e.id,
            "title": e.title,
            "type": e.type,
            "description": e.description,
            "degree": e.degree,
            "frequency": e.frequency,
            "n_tokens": None,
            "human_readable_id": number(e.id),
            "text_unit_ids": e.text_unit_ids,
        }
        for e in graph.entities
    ]


def relationship_rows(graph: Graph, number: Numbering | None = None) -> list[Row]:
    number = number or Numbering()
    return [
        {
            "id": r.id,
            "source_id": r.source_id,
            "target_id": r.target_id,
            "source": r.source,
            "target": r.target,
            "description": r.description,
            "weight": r.weight,
            "combined_degree": r.combined_degree,
            "n_tokens": None,
            "text_unit_ids": r.text_unit_ids,
            "human_readable_id": number(r.id),
        }
        for r in graph.relationships
    ]


def claim_rows(graph: Graph, number: Numbering | None = None) -> list[Row]:
    number = number or Numbering()
    return [
        {
            "id": c.id,
            "human_readable_id": number(c.id),
            "covariate_type": "claim",
            "type": c.type,
            "description": c.description,
            "status": c.status,
            "start_date": c.start_date,
            "end_date": c.end_date,
            "source_text": c.source_text,
            "subject": c.subject,
            "object": c.object,
            "subject_entity_id": c.subject_id,
            "text_unit_id": c.chunk_id,
        }
        for c in graph.claims
    ]


def community_rows(communities: Sequence[Community]) -> list[Row]:
    return [
        {
            "id": c.id,
            "community": c.community,
            "level": c.level,
            "parent": c.parent,
            "title": f"Community {c.community}",
            "size": c.size,
            "entity_ids": c.entity_ids,
            "relationship_ids": c.relationship_ids,
            "text_unit_ids": c.text_unit_ids,
            "period": None,
            "human_readable_id": c.community,
        }
        for c in communities
    ]


def report_rows(communities: Sequence[Community], reports: dict[str, Report]) -> list[Row]:
    rows = []
    for c in communities:
        r = reports.get(c.id)
        if r is None:
            continue
        record = {
            "title": r.title,
            "summary": r.summary,
            "rating": r.rating,
            "rating_explanation": r.rating_explanation,
            "findings": r.findings,
        }
        rows.append(
            {
                "community": c.community,
                "report_id": c.id,
                "report_human_readable_id": c.community,
                "title": r.title,
                "summary": r.summary,
                "full_content": r.full_content,
                "rank": r.rating,
                "rating_explanation": r.rating_explanation,
                "findings": r.findings,
                "full_content_json": json.dumps(record, ensure_ascii=False),
                "n_tokens": None,
            }
        )
    return rows


def stale(
    state: dict[str, Any], docs: Sequence[Document], chunks: Sequence[Chunk], graph: Graph
) -> dict[str, set[str]]:
    """Ids in the database that this run did not produce (relationships also when their direction moved)."""
    rels = {r.id: (r.source_id, r.target_id) for r in graph.relationships}
    return {
        "documents": state["documents"] - {d.id for d in docs},
        "chunks": state["chunks"] - {c.id for c in chunks},
        "entities": state["entities"] - {e.id for e in graph.entities},
        "relationships": {i for i, ends in state["relationships"].items() if rels.get(i) != ends},
        "claims": state["claims"] - {c.id for c in graph.claims},
    }


@dataclass(frozen=True)
class Writer:
    """Where and how an index run writes: the store, rows per write transaction, and the token counter that
    gives each text's ``n_tokens``."""

    store: Store
    batch_size: int
    tokens: Callable[[str], int]


def sync_graph(
    writer: Writer, state: dict[str, Any], docs: Sequence[Document], chunks: Sequence[Chunk], graph: Graph
) -> dict[str, int]:
    """Delete stale, write current documents, chunks, entities, relationships, claims; returns deletions."""
    store, batch_size, tokens = writer.store, writer.batch_size, writer.tokens
    gone = stale(state, docs, chunks, graph)
    deleted = {"documents": ingest.delete_documents(store, sorted(gone["documents"]), batch_size)}
    for kind in ("claims", "relationships", "chunks", "entities"):
        deleted[kind] = delete_by_id(store, kind, gone[kind], batch_size)
    number = {kind: Numbering(stored) for kind, stored in state["numbers"].items()}  # read_state's, per kind
    ingest.write_documents(store, document_rows(docs, number["documents"]), batch_size)
    ingest.write_chunks(store, chunk_rows(chunks, number["chunks"]), batch_size, tokens)
    entities = entity_rows(graph, number["entities"])
    deleted["mentions"] = prune_entity_mentions(store, entities, batch_size)
    ingest.write_entities(store, entities, batch_size, tokens)
    ingest.write_relationships(store, relationship_rows(graph, number["relationships"]), batch_size, tokens)
    ingest.write_claims(store, claim_rows(graph, number["claims"]), batch_size)
    return deleted


def sync_communities(
    writer: Writer, existing: set[str], communities: Sequence[Community], reports: dict[str, Report]
) -> dict[str, int]:
    """Replace the community layer: drop removed communities, relink kept ones, write reports, then the
    bases the next incremental run compares against (last, so a crash before it only costs a re-check)."""
    store, batch_size, tokens = writer.store, writer.batch_size, writer.tokens
    new_ids = {c.id for c in communities}
    removed = delete_by_id(store, "communities", existing - new_ids, batch_size)
    clear_community_parents(store, existing & new_ids, batch_size)
    ingest.write_communities(store, community_rows(communities), batch_size)
    ingest.write_community_reports(store, report_rows(communities, reports), batch_size, tokens)
    bases = [
        {
            "id": c.id,
            "graph_basis": c.graph_basis or None,
            "report_basis": r.basis if (r := reports.get(c.id)) else None,
        }
        for c in communities
    ]
    write_community_bases(store, bases, batch_size)
    return {"removed": removed, "kept": len(existing & new_ids), "new": len(new_ids - existing)}


def stored_report(row: Row) -> Report:
    findings = row.get("findings") or "[]"
    try:
        parsed = json.loads(findings) if isinstance(findings, str) else list(findings)
    except ValueError:
        parsed = []
    return Report(
        row["id"],
        row.get("title") or "",
        row.get("summary") or "",
        float(row.get("rank") or 0.0),
        row.get("rating_explanation") or "",
        parsed,
        row.get("full_content") or "",
        reused=True,
        basis=row.get("basis"),
    )


def previous_partition(store: Store) -> list[Previous]:
    """The stored communities, as incremental clustering reads them (before entities are deleted)."""
    return [
        Previous(r["id"], int(r["level"]), int(r["community"]), int(r["parent"]), tuple(r["members"]), r["graph_basis"])
        for r in stored_partition(store)
        if r["level"] is not None and r["community"] is not None
    ]
