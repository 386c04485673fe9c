"""Dev measurement of local search's evidence recall on MuSiQue (self-contained; the full harness is bench/).

Evidence recall = share of a question's gold text units whose text appears in the assembled context, averaged
over questions, at fixed context budgets; also the tokens used and the retrieval + assembly latency (query
embedding excluded). Needs musique imported into the Neo4j the config points at:

    driftgraph import-graphrag ../shared/data/musique
    python -m bench local-recall --budgets 2000 4000 8000 12000 [--split questions_dev.jsonl] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from bench.paths import SHARED

DATA = SHARED / "musique"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budgets", type=int, nargs="+", default=[2000, 4000, 8000, 12000])
    ap.add_argument("--split", default="questions_dev.jsonl")
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--config", type=Path, default=None, help="driftgraph.yaml (else ./driftgraph.yaml + env)")
    ap.add_argument("--set", action="append", default=[], help="local.KEY=VALUE override (repeatable)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    import pyarrow.parquet as pq

    from driftgraph.api import open_engine
    from driftgraph.config import load_config, parse_config
    from driftgraph.query.local.search import LocalAsk, build_local_context

    cfg = load_config(args.config)
    if args.set:
        data = cfg.to_dict()
        for kv in args.set:
            key, _, value = kv.partition("=")
            try:
                parsed = json.loads(value)
            except json.JSONDecodeError:
                parsed = value
            data["local"][key.removeprefix("local.")] = parsed
        cfg = parse_config(data, "--set")
    questions = [json.loads(line) for line in (args.data / args.split).read_text().splitlines() if line.strip()]
    units = pq.read_table(args.data / "text_units.parquet", columns=["id", "text"]).to_pydict()
    text_of = dict(zip(units["id"], units["text"], strict=True))
    with open_engine(cfg) as engine:
        rt = engine.runtime.for_run()
        vectors = engine.embed([q["question"] for q in questions])
        build_local_context(
            rt, LocalAsk(questions[0]["question"], budget=1000, query_vector=vectors[0]), cfg.local
        )  # warm
        table = {}
        for budget in args.budgets:
            recalls, used, latency, trips, hops, routes = [], [], [], [], {}, {}
            for q, vec in zip(questions, vectors, strict=True):
                ctx = build_local_context(rt, LocalAsk(q["question"], budget=budget, query_vector=vec), cfg.local)
                gold = q["gold_text_unit_ids"]
                recalls.append(sum(text_of[g] in ctx.text for g in gold) / len(gold))
                used.append(ctx.tokens)
                latency.append(ctx.recorder.timings["retrieval_assembly_s"])
                trips.append(ctx.recorder.round_trips)
                route = ctx.recorder.route
                shape = route.shape if route is not None else "-"
                routes[shape] = routes.get(shape, 0) + 1
                for c in ctx.included:
                    if c.source == "chunk" and c.id in gold:
                        hops[c.hop] = hops.get(c.hop, 0) + 1
            table[budget] = {
                "recall": round(statistics.mean(recalls), 3),
                "tokens_mean": round(statistics.mean(used)),
                "p50_ms": round(1000 * statistics.median(latency), 1),
                "max_round_trips": max(trips),
                "gold_chunks_by_hop": hops,
                "routes": routes,
            }
    if args.json:
        print(json.dumps(table, indent=2))
    else:
        print(f"{'budget':>7} {'recall':>7} {'tokens':>7} {'p50 ms':>7} trips  gold chunks by hop / routes")
        for b, r in table.items():
            print(
                f"{b:>7} {r['recall']:>7.3f} {r['tokens_mean']:>7} {r['p50_ms']:>7} {r['max_round_trips']:>5}  "
                f"{r['gold_chunks_by_hop']} / {r['routes']}"
            )
    return 0
