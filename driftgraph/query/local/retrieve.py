"""Local search's retrieval: the graph stages in order, then the three that reorder what they ranked.

``retrieve`` runs entry (round trip 1), expansion (round trip 2), the hops past the second (the bridge, one
round trip each) and, with ``ranking: ppr``, the walk (plus ``ppr.fetch``'s round trip); ``rank`` ranks every
source. ``fuse_original`` (a rewritten multi-turn question), ``rerank`` (``local.rerank``) and ``choose_route``
(the question's shape) follow. Each returns a new value; only the run's trace records as it goes.
"""

from __future__ import annotations

import time
from dataclasses import replace

from driftgraph.query.budget import Candidate
from driftgraph.query.local.entry import EntryResult, enter
from driftgraph.query.local.expand import expand
from driftgraph.query.local.multihop import bridge
from driftgraph.query.local.neighbourhood import Neighbourhood
from driftgraph.query.local.ppr import walk_graph
from driftgraph.query.local.rank import Ranked, rank_all, rrf_chunks
from driftgraph.query.local.run import LocalRun
from driftgraph.query.rerank import renumber, rerank_chunks
from driftgraph.query.route import Route, route
from driftgraph.query.trace import Trace


def retrieve(run: LocalRun) -> tuple[EntryResult, Neighbourhood]:
    """Entry, expansion, the hops past the second and the walk (each timed on the trace)."""
    t0 = time.perf_counter()
    entry = enter(run)  # round trip 1
    t1 = time.perf_counter()
    found = expand(run, entry)  # round trip 2
    found = bridge(run, entry, found)  # round trips 3.. (hops past 2)
    if run.settings.ranking == "ppr":
        found = walk_graph(run, entry, found)  # ppr.fetch: one more
    run.trace.timings.update(entry_s=t1 - t0, expand_s=time.perf_counter() - t1)
    return entry, found


def rank(run: LocalRun, entry: EntryResult, found: Neighbourhood) -> Ranked:
    """Every source ranked, its rows rendered and counted (``rank.py``)."""
    return rank_all(found, entry, run.settings, run.rt.count_many)


def fuse_original(run: LocalRun, ranked: Ranked) -> Ranked:
    """A rewritten question may lose what the user's own words found: retrieve for the original too and fuse
    the two chunk rankings by reciprocal rank (RRF, ``rrf_k``). Only when a rewrite changed the question."""
    if run.query == run.question:
        return ranked
    side = Trace(mode="local", question=run.question)  # the original's entry verdicts stay out of the trace
    vector = run.rt.embed([run.question], phase="embed")[0]
    side_run = replace(run, query=run.question, vector=vector, trace=side)
    original = rank(side_run, *retrieve(side_run))
    rewritten = ranked.candidates.get("chunk", [])
    fused = rrf_chunks([rewritten, original.candidates.get("chunk", [])], run.settings.rrf_k)
    rec = run.trace
    rec.round_trips += side.round_trips
    rec.extra["fusion"] = {
        "queries": [run.query, run.question],
        "chunks": [len(rewritten), len(original.candidates.get("chunk", []))],
        "fused": len(fused),
    }
    rec.notes.append("chunks of the rewritten and the original question fused by reciprocal rank")
    return _with_chunks(ranked, renumber(fused, run.rt.count_many))


def rerank(run: LocalRun, ranked: Ranked) -> Ranked:
    """The configured reranker reorders the best chunk candidates (no call with provider ``none``)."""
    cfg = run.settings.rerank
    chunks = ranked.candidates.get("chunk")
    if cfg.provider == "none" or not chunks:
        return ranked
    t0 = time.perf_counter()
    from driftgraph.llm.tokenizer import truncate_tokens

    encoding = run.rt.config.tokenizer.encoding
    reordered = rerank_chunks(
        chunks, run.query, cfg, lambda text, n: truncate_tokens(text, n, encoding), run.rt.chat, run.prompt
    )
    run.trace.timings["rerank_s"] = time.perf_counter() - t0
    run.trace.notes.append(
        f"chunks reranked by {cfg.provider} (top {min(cfg.top_n, len(reordered))} of {len(reordered)})"
    )
    return _with_chunks(ranked, renumber(reordered, run.rt.count_many))


def choose_route(run: LocalRun, entry: EntryResult) -> Route:
    """The question's shape: which sources go first and which floors hold (``query/route.py``)."""
    return route(
        run.query,
        entry.entities,
        run.settings,
        None,
        run.rt.chat() if run.settings.llm_router else None,
        lambda q, ents: run.prompt(
            "route_question", question=q, entities=", ".join(e.title for e in ents[:10]) or "none"
        ),
    )


def _with_chunks(ranked: Ranked, chunks: list[Candidate]) -> Ranked:
    return replace(ranked, candidates={**ranked.candidates, "chunk": chunks})
