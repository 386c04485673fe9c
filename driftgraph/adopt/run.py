"""``driftgraph adopt``: detect, map, describe, RELATED, communities, reports, embeddings, in that order.

Communities, reports and embeddings are the indexer's own stages (index/communities.py, index/reports.py,
index/write.py, store/ingest.py). Every stage is incremental: a re-run after the other tool added documents
describes only entities whose evidence changed, regenerates only the reports of communities whose membership
changed (LLM calls are cached on disk too) and embeds only nodes without a vector.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from driftgraph.adopt.detect import detect
from driftgraph.adopt.graph import describe, read_graph, write_entities, write_related
from driftgraph.adopt.map import check_vectors, ensure_indexes, fill_chunks, fill_documents, link, refresh_aliases
from driftgraph.adopt.summary import Added, AdoptFailures, AdoptSummary, ReusedVectors
from driftgraph.index.communities import detect_communities
from driftgraph.index.reports import generate_reports
from driftgraph.index.summary import CommunityChanges, ReportFailure, TokenCount
from driftgraph.index.write import Writer, stored_report, sync_communities
from driftgraph.llm.cache import CallCache
from driftgraph.llm.chat import ChatClient
from driftgraph.llm.ledger import Ledger
from driftgraph.store import ingest
from driftgraph.store.calibration import calibrate
from driftgraph.store.index_state import stored_reports
from driftgraph.store.schema import ensure_schema, mark_filled_by
from driftgraph.store.synonyms import link_synonyms

if TYPE_CHECKING:
    from driftgraph.runtime import Runtime


def run_adopt(rt: Runtime, source: str = "auto") -> AdoptSummary:
    """Fill driftgraph's model next to the graph another tool built; returns its summary."""
    cfg, store, embedder = rt.config, rt.store, rt.embedder
    icfg = cfg.index
    batch = icfg.write_batch_size
    seconds: dict[str, float] = {}
    start_all = time.perf_counter()

    @contextmanager
    def stage(name: str) -> Iterator[None]:
        t0 = time.perf_counter()
        yield
        seconds[name] = round(time.perf_counter() - t0, 3)

    with stage("detect"):
        found = detect(store, source)
    ledger = Ledger()
    # fails now if no endpoint is configured
    chat = ChatClient(cfg.llm, ledger, CallCache(icfg.cache_dir), cfg.tokenizer.encoding)
    with stage("schema"):
        ensure_schema(store, embedder.model_id, embedder.dimensions, hnsw=cfg.neo4j.vector_index)
        mark_filled_by(store, f"adopt:{found.source}")
    with stage("map"):
        linked = link(store)
        fill_documents(store, batch)
        chunks, foreign_chunk_vectors = fill_chunks(store, rt.count_tokens, embedder.dimensions, found.source, batch)
        aliased = ensure_indexes(store, embedder.dimensions)
    with stage("describe"):
        adopted, graph = read_graph(store)
        foreign_entity_vectors = check_vectors(
            "entity", "__Entity__", [a.node for a in adopted], embedder.dimensions, found.source
        )
        described = describe(adopted, {c.id: c for c in chunks}, chat, cfg)
    with stage("write"):
        write_entities(store, adopted, rt.count_tokens, batch)
        related = write_related(store, graph, rt.count_tokens, batch)
    with stage("communities"):
        communities = detect_communities(graph, icfg.max_cluster_size, icfg.seed)
    with stage("reports"):
        rows = store.read("adopt/community_ids")
        existing_ids = set(rows[0]["ids"] if rows else [])
        kept = {c.id for c in communities} & existing_ids
        existing = {r["id"]: stored_report(r) for r in stored_reports(store, kept)}
        reports, report_stats = generate_reports(graph, communities, chat, cfg, existing)
        writer = Writer(store, batch, rt.count_tokens)
        community_sync = sync_communities(writer, existing_ids, communities, reports)
        refresh_aliases(store, aliased)
    with stage("embed"):
        embedded = {kind: ingest.embed_pending(store, kind, embedder.embed, batch) for kind in ingest.EMBED_KINDS}
    with stage("synonyms"):
        synonyms = link_synonyms(store, embedder.embed, cfg.synonyms, batch)
    with stage("indexes"):
        store.run_auto("adopt/await_indexes", seconds=cfg.neo4j.index_wait_s)
        calibrate(store, embedder.embed, embedder.model_id)  # the index's own entry threshold
    total = ledger.to_dict(per_phase=True)["total"]
    return AdoptSummary(
        source=found.source,
        found=found.counts,
        documents=found.counts["documents"],
        chunks=len(chunks),
        entities=len(graph.entities),
        relationships=len(graph.relationships),
        communities=len(communities),
        levels=len({c.level for c in communities}),
        reports=len(reports),
        llm_calls=total["llm_calls"],
        tokens=TokenCount(prompt=total["prompt_tokens"], completion=total["completion_tokens"]),
        cache_hits=total["cache_hits"],
        added=Added(
            linked=linked,
            descriptions=described["described"],
            related=related,
            communities=CommunityChanges.from_counts(community_sync),
            reports_generated=report_stats["generated"],
            reports_reused=report_stats["reused"],
            reports_skipped_small=report_stats["skipped_small"],
            embedded=embedded,
            synonyms=synonyms,
        ),
        reused_vectors=ReusedVectors(chunk=foreign_chunk_vectors, entity=foreign_entity_vectors),
        aliased_indexes=tuple(aliased),
        failures=AdoptFailures(
            descriptions=tuple(described["failures"]),
            reports=tuple(ReportFailure.from_dict(f) for f in report_stats["failures"]),
        ),
        seconds={**seconds, "total": round(time.perf_counter() - start_all, 3)},
    )
