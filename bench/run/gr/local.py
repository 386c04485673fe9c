"""GraphRAG 3.2.0's local context builder on a parquet index: evidence recall, tokens, latency, memory.

python -m bench gr-local --root DIR --questions FILE --budgets 2000,4000 --reps 3 --speed-budget 8000 --out X.json
"""

from __future__ import annotations

from bench.run.gr import offline

offline.setup()

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from bench import metrics  # noqa: E402
from bench.run import data  # noqa: E402
from bench.run.embcache import EmbeddingCache  # noqa: E402
from bench.run.gr import common  # noqa: E402


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", type=Path, default=data.MUSIQUE)
    ap.add_argument("--questions", type=Path, default=None)
    ap.add_argument("--budgets", default="2000,4000,8000,12000")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--speed-budget", type=int, default=8000)
    ap.add_argument("--model-id", default="all-MiniLM-L6-v2-int8")
    ap.add_argument("--community-store", action=argparse.BooleanOptionalAction, default=True)
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)

    t0 = time.perf_counter()
    import graphrag.query.structured_search.local_search.mixed_context  # noqa: F401

    import_s = time.perf_counter() - t0
    cache = EmbeddingCache(a.model_id)
    rss0 = metrics.current_rss_mb()
    t0 = time.perf_counter()
    idx = common.load_index(a.root, cache, "all")
    embedder = common.CachedEmbedder(cache)
    builder = common.local_context_builder(idx, embedder)
    load_s = time.perf_counter() - t0
    rss_loaded = metrics.current_rss_mb()
    tok = common.tokenizer()
    units = data.text_units(a.root)
    qs = data.questions(a.questions) if a.questions else data.questions()
    budgets = [int(b) for b in a.budgets.split(",") if b]

    def build(b, question: str, budget: int) -> tuple[str, float]:
        embedder.embedding(input=[question])  # the query vector is looked up first: embedding is timed apart
        t = time.perf_counter()
        res = b.build_context(query=question, **common.local_params(budget))
        ms = (time.perf_counter() - t) * 1000
        ctx = res.context_chunks if isinstance(res.context_chunks, str) else "\n\n".join(res.context_chunks)
        return ctx, ms

    def quality_of(b) -> dict[str, list]:
        out: dict[str, list] = {}
        for budget in budgets:
            rows = []
            for q in qs:
                ctx, ms = build(b, q.question, budget)
                gold = [units.get(g, "") for g in q.gold]
                rows.append(
                    {
                        "id": q.id,
                        "hops": q.hops,
                        "recall": metrics.evidence_recall(ctx, gold),
                        "tokens": len(tok.encode(ctx)),
                        "ms": ms,
                    }
                )
            out[str(budget)] = rows
        return out

    build(builder, qs[0].question, a.speed_budget)  # warm-up, not counted
    quality = quality_of(builder)
    speed = [[build(builder, q.question, a.speed_budget)[1] for q in qs] for _ in range(a.reps)]
    quality_community = {}
    if budgets and a.community_store:
        idx2 = common.load_index(a.root, cache, "community")
        quality_community = quality_of(common.local_context_builder(idx2, embedder))
    out = {
        "system": "graphrag-local",
        "import_s": import_s,
        "load_s": load_s,
        "rss_before_load_mb": rss0,
        "rss_after_load_mb": rss_loaded,
        "peak_rss_mb": metrics.peak_rss_mb(),
        "speed_budget": a.speed_budget,
        "quality": quality,
        "quality_community_store": quality_community,
        "speed_ms": speed,
    }
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(out, indent=1))
