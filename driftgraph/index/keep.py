"""A failed extraction deletes nothing: what a chunk contributed in an earlier run stays in the graph.

When a chunk's extraction fails this run (an unusable answer, a call that failed after its retries, a cold
cache on a bad day), its result is empty. Without this step the sync would then delete every entity,
relationship and claim only that chunk had contributed. Instead the stored contributions of such a chunk
(entities it mentions, relationships listing it, its claims) are read back from the database and added to
this run's graph, so they are written again, clustered and reported like the rest. The chunk is still
listed as a failure (never cached), and the next run's successful extraction replaces them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence

from driftgraph.index.chunk import Chunk
from driftgraph.index.extract import ChunkExtraction
from driftgraph.index.merge import Claim, Entity, Graph, Relationship
from driftgraph.store.db import Store


def failed_chunks(extractions: Iterable[ChunkExtraction], stored: set[str]) -> tuple[list[str], list[str]]:
    """Stored chunks whose main extraction failed (keep everything), and those whose claims failed (keep
    their claims; a failed main extraction makes no claim call, so it is in both lists)."""
    graph_failed: list[str] = []
    claims_failed: list[str] = []
    for e in extractions:
        if e.chunk_id not in stored:
            continue
        if e.failed:
            graph_failed.append(e.chunk_id)
        if e.failed or any(f.startswith("claims:") for f in e.failures):
            claims_failed.append(e.chunk_id)
    return sorted(graph_failed), sorted(claims_failed)


def keep_failed(
    store: Store, graph: Graph, chunks: Sequence[Chunk], extractions: Sequence[ChunkExtraction], stored: set[str]
) -> dict[str, int]:
    """Add to ``graph`` (in place) what failed stored chunks contributed before; returns the counts of items
    added that this run's extractions did not produce."""
    graph_failed, claims_failed = failed_chunks(extractions, stored)
    added = {"entities": 0, "relationships": 0, "claims": 0}
    if not graph_failed and not claims_failed:
        return added
    order = {c.id: i for i, c in enumerate(chunks)}
    entities = {e.id: e for e in graph.entities}
    touched: set[str] = set()
    if graph_failed:
        for row in store.read("ingest/kept_entities", chunk_ids=graph_failed):
            ent = entities.get(row["id"])
            if ent is None:
                ent = entities[row["id"]] = Entity(row["id"], row["title"] or "", row["type"] or "")
                added["entities"] += 1
            _add_lines(ent.descriptions, row["description"])
            if row["chunk_id"] not in ent.text_unit_ids:
                ent.text_unit_ids.append(row["chunk_id"])
                touched.add(ent.id)
    rels = {r.id: r for r in graph.relationships}
    if graph_failed:
        for row in store.read("ingest/kept_relationships", chunk_ids=graph_failed):
            if row["source_id"] not in entities or row["target_id"] not in entities:
                continue
            rel = rels.get(row["id"])
            if rel is None:
                rel = rels[row["id"]] = Relationship(
                    row["id"], row["source_id"], row["target_id"], row["source"] or "", row["target"] or ""
                )
                added["relationships"] += 1
            # the stored weight summed every chunk's strength, the failed one's included
            rel.weight = max(rel.weight, float(row["weight"] or 0.0))
            _add_lines(rel.descriptions, row["description"])
            for chunk_id in row["chunk_ids"] or []:
                if chunk_id not in rel.text_unit_ids:
                    rel.text_unit_ids.append(chunk_id)
            rel.text_unit_ids.sort(key=lambda c: order.get(c, len(order)))
    if claims_failed:
        have = {c.id for c in graph.claims}
        for row in store.read("ingest/kept_claims", chunk_ids=claims_failed):
            if row["id"] in have:
                continue
            subject_id = row["subject_id"] if row["subject_id"] in entities else None
            graph.claims.append(
                Claim(
                    row["id"],
                    subject_id,
                    None,
                    row["subject"] or "",
                    row["object"] or "NONE",
                    row["type"] or "",
                    row["status"] or "",
                    row["start_date"] or "",
                    row["end_date"] or "",
                    row["description"] or "",
                    row["source_text"] or "",
                    row["chunk_id"],
                )
            )
            added["claims"] += 1
        graph.claims.sort(key=lambda c: order.get(c.chunk_id, len(order)))  # stable: answer order kept
    for entity_id in touched:
        entities[entity_id].text_unit_ids.sort(key=lambda c: order.get(c, len(order)))
    graph.entities = sorted(entities.values(), key=lambda e: e.id)
    graph.relationships = sorted(rels.values(), key=lambda r: r.id)
    _degrees(graph)
    return added


def _add_lines(descriptions: list[str], stored: str | None) -> None:
    """The stored description is the earlier run's list joined by newlines (or its summary): add each line this
    run's extractions did not give again, so the failed chunk's part stays."""
    for line in (stored or "").split("\n"):
        line = line.strip()
        if line and line not in descriptions:
            descriptions.append(line)


def _degrees(graph: Graph) -> None:
    """``degree`` and ``combined_degree`` as merge() sets them, after items were added."""
    neighbours: dict[str, set[str]] = defaultdict(set)
    for rel in graph.relationships:
        neighbours[rel.source_id].add(rel.target_id)
        neighbours[rel.target_id].add(rel.source_id)
    for e in graph.entities:
        e.degree = len(neighbours[e.id])
    degree = {e.id: e.degree for e in graph.entities}
    for rel in graph.relationships:
        rel.combined_degree = degree[rel.source_id] + degree[rel.target_id]
