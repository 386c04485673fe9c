"""Local search's retrieval stages, each recording what it kept and dropped in the trace: entry points
(round trip 1), expansion (round trip 2), the hops past the second (personalized PageRank or the bridge), the
fusion of a rewritten question with the user's own words, the optional reranker and the route.

``search.build_local_context`` runs them in that order; ranking is ``rank``'s and filling ``assemble``'s.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from driftgraph.prompts import render_prompt
from driftgraph.query.budget import Candidate
from driftgraph.query.local.entry import ChunkHit, EntryResult, run_entry
from driftgraph.query.local.expand import expansion_params, run_expansion
from driftgraph.query.local.multihop import run_bridge
from driftgraph.query.local.ppr import run_ppr
from driftgraph.query.local.rank import Ranked, rank_all, rrf_chunks
from driftgraph.query.local.rerank import renumber, rerank_chunks
from driftgraph.query.local.route import Route, thematic_wording
from driftgraph.query.local.route import route as choose_route
from driftgraph.query.trace import EntryCandidate, Trace

if TYPE_CHECKING:
    from driftgraph.config import LocalConfig
    from driftgraph.runtime import Runtime


def prompt(rt: Runtime, name: str, **values: object) -> str:
    """A prompt file rendered with the deployment's prompt overrides."""
    return render_prompt(name, rt.config.prompts, **values)


def entry_points(
    rt: Runtime, settings: LocalConfig, vector: Any, query: str, exclude: Sequence[str], rec: Trace
) -> tuple[EntryResult, list[str], list[str]]:
    """EntryResult entities, chunk and report hits with their verdicts; returns the seed chunks and report ids."""
    entry = run_entry(rt.store, settings, vector, query, exclude)
    thematic = thematic_wording(query)
    entry.strict = entry.off_topic and not thematic
    gate = settings.min_similarity if entry.strict else settings.chunk_min_similarity
    # A thematic question names no one thing: its nearest reports enter whatever their cosine.
    report_gate = -1.0 if thematic else gate
    for cand in entry.candidates:
        rec.add_entry(cand)
    gates: tuple[tuple[Literal["chunk", "report"], list[ChunkHit], float], ...] = (
        ("chunk", entry.chunk_hits, gate),
        ("report", entry.report_hits, report_gate),
    )
    for kind, hits, floor in gates:
        for hit in hits:
            ok = hit.similarity >= floor
            reason = None if ok else ("off_topic" if entry.strict else "below_threshold")
            rec.add_entry(
                EntryCandidate(
                    hit.id,
                    "",
                    round(hit.similarity, 4),
                    "kept" if ok else "dropped",
                    reason,
                    kind=kind,
                    similarity=hit.similarity,
                    vector_rank=hit.rank,
                )
            )
    seeds = [h.id for h in entry.chunk_hits if h.similarity >= gate][: settings.seed_chunks]
    report_ids = [h.id for h in entry.report_hits if h.similarity >= report_gate]
    return entry, seeds, report_ids


def expand(
    rt: Runtime,
    settings: LocalConfig,
    vector: Any,
    entry: EntryResult,
    seeds: list[str],
    report_ids: list[str],
    exclude: Sequence[str],
    rec: Trace,
) -> Any:
    """One expansion query around the entry points (second hop included)."""
    params = expansion_params(
        settings,
        vector,
        [e.id for e in entry.entities],
        seeds,
        [h.id for h in entry.chunk_hits],
        report_ids,
        exclude,
        entry.excluded_ids,
    )
    expansion, expand_trips = run_expansion(rt.store, params)
    # counted here, not from the store's shared counter: DRIFT runs several of these at once
    rec.round_trips = 1 + expand_trips
    return expansion


def bridge(
    rt: Runtime,
    settings: LocalConfig,
    vector: Any,
    entry: EntryResult,
    expansion: dict[str, Any],
    seeds: list[str],
    exclude: Sequence[str],
    rec: Trace,
) -> None:
    """Hops past the second: the best chunks not yet hopped from seed the next hop (``multihop``, up to
    ``max_hops``); with ``ranking: ppr`` a personalized PageRank walk then ranks everything found, the bridge's
    links included (``ppr``; ``ppr.fetch`` adds one neighbourhood fetch before it). Without the bridge the walk
    only sees two hops: the second hop's rare entities lead nowhere further."""
    exclude_ids = sorted({*entry.excluded_ids, *exclude})
    exclude_titles = sorted({e.lower() for e in exclude})
    trips = run_bridge(rt.store, settings, vector, entry, expansion, seeds, exclude_ids, exclude_titles)
    if settings.ranking == "ppr":
        trips += run_ppr(rt.store, settings, vector, entry, expansion, seeds, exclude_ids, exclude_titles)
        walk = expansion["ppr"]
        rec.extra["ppr"] = {
            "nodes": walk.nodes,
            "edges": walk.edges,
            "relations": walk.relations,
            "iterations": walk.iterations,
        }
    rec.round_trips += trips


def fuse_original(
    rt: Runtime,
    settings: LocalConfig,
    question: str,
    query: str,
    exclude: Sequence[str],
    ranked: Ranked,
    rec: Trace,
) -> None:
    """A rewritten question may lose what the user's own words found: retrieve for the original too and fuse
    the two chunk rankings by reciprocal rank (RRF, ``rrf_k``). Only when a rewrite changed the question."""
    if query == question:
        return
    side = Trace(mode="local", question=question)  # the original's entry verdicts stay out of the trace
    vector = rt.embed([question], phase="embed")[0]
    entry, seeds, report_ids = entry_points(rt, settings, vector, question, exclude, side)
    expansion = expand(rt, settings, vector, entry, seeds, report_ids, exclude, side)
    bridge(rt, settings, vector, entry, expansion, seeds, exclude, side)
    original = rank_all(expansion, entry, settings, rt.count_many)
    rewritten = ranked.candidates.get("chunk", [])
    fused = rrf_chunks([rewritten, original.candidates.get("chunk", [])], settings.rrf_k)
    ranked.candidates["chunk"] = renumber(fused, rt.count_many)
    rec.round_trips += side.round_trips
    rec.extra["fusion"] = {
        "queries": [query, question],
        "chunks": [len(rewritten), len(original.candidates.get("chunk", []))],
        "fused": len(fused),
    }
    rec.notes.append("chunks of the rewritten and the original question fused by reciprocal rank")


def rerank(rt: Runtime, settings: LocalConfig, query: str, candidates: dict[str, list[Candidate]], rec: Trace) -> None:
    """The configured reranker reorders the best chunk candidates (no call with provider ``none``)."""
    cfg = settings.rerank
    if cfg.provider == "none" or not candidates.get("chunk"):
        return
    t0 = time.perf_counter()
    from driftgraph.llm.tokenizer import truncate_tokens

    encoding = rt.config.tokenizer.encoding
    chunks = rerank_chunks(
        candidates["chunk"],
        query,
        cfg,
        lambda text, n: truncate_tokens(text, n, encoding),
        rt.chat,
        lambda name, **v: prompt(rt, name, **v),
    )
    candidates["chunk"] = renumber(chunks, rt.count_many)
    rec.timings["rerank_s"] = time.perf_counter() - t0
    rec.notes.append(f"chunks reranked by {cfg.provider} (top {min(cfg.top_n, len(chunks))} of {len(chunks)})")


def route(rt: Runtime, settings: LocalConfig, query: str, entry: EntryResult) -> Route:
    """The question's shape: which sources go first and which floors hold."""
    return choose_route(
        query,
        entry.entities,
        settings,
        None,
        rt.chat() if settings.llm_router else None,
        lambda q, ents: prompt(
            rt, "route_question", question=q, entities=", ".join(e.title for e in ents[:10]) or "none"
        ),
    )
