"""driftgraph local search, context only, on a database that holds the imported index.

python -m bench dg-local --uri bolt://... --budgets 2000,4000 --reps 3 --speed-budget 8000 --out X.json

Quality uses ``Engine.query_local(question, context_only=True, budget=B)`` (what the CLI's
``--context-only --budget B`` runs) and scores the context text. Latency times retrieval + assembly only:
``build_local_context`` with the question's vector handed in, so embedding is excluded (and timed apart
by the speed part). The speed runs also time the product path, ``Engine.query_local`` with ``context_only``
(schema check, query embedding from the bench's cache, assembly, the trace write to Neo4j), interleaved
with the bare assembly question by question.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from bench import metrics
from bench.run import data
from bench.run.dg import common


def main(argv: list[str] | None = None) -> None:
    ap = common.musique_args(argparse.ArgumentParser())
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--speed-budget", type=int, default=8000)
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)

    from driftgraph.query.local.search import LocalAsk, build_local_context

    rss0 = metrics.current_rss_mb()
    eng = common.engine(a.uri)
    eng.check_schema()
    rt = eng.runtime.for_run()
    units = data.text_units(a.root)
    qs = data.questions(a.questions) if a.questions else data.questions()
    budgets = [int(b) for b in a.budgets.split(",") if b]
    qvec = dict(zip([q.id for q in qs], eng.embed([q.question for q in qs]), strict=True))

    def assemble(q, budget: int) -> tuple[str, int, float]:
        t = time.perf_counter()
        ctx = build_local_context(
            rt.for_run(), LocalAsk(q.question, budget=budget, query_vector=qvec[q.id]), eng.config.local
        )
        return ctx.text, ctx.tokens, (time.perf_counter() - t) * 1000

    assemble(qs[0], budgets[0] if budgets else a.speed_budget)  # warm-up: driver, pools, plan cache
    quality: dict[str, list] = {}
    for b in budgets:
        rows = []
        for q in qs:
            t = time.perf_counter()
            res = eng.query_local(q.question, context_only=True, budget=b)
            ms_api = (time.perf_counter() - t) * 1000
            ctx = res.context.text
            _, _, ms = assemble(q, b)
            rows.append(
                {
                    "id": q.id,
                    "hops": q.hops,
                    "recall": metrics.evidence_recall(ctx, [units.get(g, "") for g in q.gold]),
                    "tokens": res.context.tokens,
                    "ms": ms,
                    "ms_api": ms_api,
                    "route": res.trace.route.shape if res.trace.route is not None else None,
                    "r2": metrics.ranked_recall(_ranked_chunks(res.trace), q.gold, 2),
                    "r5": metrics.ranked_recall(_ranked_chunks(res.trace), q.gold, 5),
                    "hops_found": _depths(res.trace, q.gold),
                }
            )
        quality[str(b)] = rows
    # the product path next to the bare assembly, interleaved question by question in the same runs:
    # Engine.query_local (context only) = schema check + embedding (from the cache) + assembly + trace write
    speed: list[list[float]] = []
    speed_api: list[list[float]] = []
    for _ in range(a.reps):
        bare, api = [], []
        for q in qs:
            bare.append(assemble(q, a.speed_budget)[2])
            t = time.perf_counter()
            eng.query_local(q.question, context_only=True, budget=a.speed_budget)
            api.append((time.perf_counter() - t) * 1000)
        speed.append(bare)
        speed_api.append(api)
    out = {
        "system": "driftgraph-local",
        "rss_before_mb": rss0,
        "rss_after_mb": metrics.current_rss_mb(),
        "peak_rss_mb": metrics.peak_rss_mb(),
        "speed_budget": a.speed_budget,
        "quality": quality,
        "speed_ms": speed,
        "speed_api_ms": speed_api,
        "embedding_misses": eng.embedder.misses,
    }
    eng.close()
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(out, indent=1))


def _ranked_chunks(trace) -> list[str]:
    """The chunk candidates in ranking order (included or dropped for budget), whatever the budget."""
    ranked = [i for i in trace.items if i.source == "chunk" and i.rank]
    return [i.id for i in sorted(ranked, key=lambda i: i.rank)]


def _depths(trace, gold) -> dict[str, int | None]:
    """Per gold unit, the hop that brought it in (None: not a candidate)."""
    depth = {i.id: i.depth for i in trace.items if i.source == "chunk"}
    return {g: depth.get(g) for g in gold}
