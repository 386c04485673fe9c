"""Dev measurement of local search's evidence recall on MuSiQue (self-contained; the full harness is bench/).

Evidence recall = share of a question's gold text units whose text appears in the assembled context, averaged
over questions, at fixed context budgets; also the tokens used and the retrieval + assembly latency (query
embedding excluded). Needs musique imported into the Neo4j the config points at:

    driftgraph import-graphrag ../shared/data/musique
    python -m bench local-recall --budgets 2000 4000 8000 12000 [--split questions_dev.jsonl] [--json]

Ranked recall (``--uri URI --out FILE``): on the database at URI, with the shared embedding cache, each
``--rank`` configuration (``NAME=JSON`` overrides of ``local``; the defaults always first) and vector-only on
the same questions (``--split`` a file under ``--data`` or any path, e.g. ``bench/questions/...``): per
budget and question, evidence recall, R@2 / R@5 (share of the gold chunks among the first 2 / 5 chunks of the
context, in the context's order) and the reciprocal rank of the first gold chunk in the context; paired
with vector-only and with the defaults (ratio of means and difference, seeded bootstrap intervals).
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

from bench import metrics
from bench.paths import SHARED
from bench.run import data, machine, vector_only
from bench.run.dg import common

DATA = SHARED / "musique"


KS = (2, 5)


def context_chunks(ctx) -> list[str]:
    """The chunk ids of an assembled context in the order the context shows them (their short ids)."""
    return [c.id for c in sorted((c for c in ctx.included if c.source == "chunk"), key=lambda c: c.rank)]


def ranked_row(qid: str, order: list[str], gold, recall: float) -> dict:
    row = {"id": qid, "recall": recall, "order": order[:10]}
    row.update({f"r{k}": metrics.ranked_recall(order, gold, k) for k in KS})
    row["rr"] = metrics.reciprocal_rank(order, gold)
    return row


def local_ranked(uri: str, overrides: dict, questions, qvec: dict, units: dict, budgets) -> dict[str, list[dict]]:
    """Context-only local search with these ``local`` overrides: per budget, each question's ranked row."""
    from driftgraph.query.local.search import LocalAsk, build_local_context

    eng = common.engine(uri, extra={"local": overrides})
    out: dict[str, list[dict]] = {str(b): [] for b in budgets}
    try:
        for b in budgets:
            for q in questions:
                ctx = build_local_context(
                    eng.runtime.for_run(), LocalAsk(q.question, budget=b, query_vector=qvec[q.id]), eng.config.local
                )
                rec = metrics.evidence_recall(ctx.text, [units.get(g, "") for g in q.gold])
                out[str(b)].append(ranked_row(q.id, context_chunks(ctx), q.gold, rec))
    finally:
        eng.close()
    return out


def vector_ranked(questions, units: dict, embed, count, budgets) -> dict[str, list[dict]]:
    """Vector-only (bench/run/vector_only.py): its context is the top chunks by cosine, in that order."""
    ids = sorted(units)
    texts = [units[i] for i in ids]
    tokens = [count(t) for t in texts]
    cvecs = embed(texts)
    qvecs = embed([q.question for q in questions])
    out: dict[str, list[dict]] = {}
    for b in budgets:
        rows = []
        for q, qv in zip(questions, qvecs, strict=True):
            picked, _ = vector_only.assemble(qv, ids, cvecs, texts, tokens, b)
            ctx = "\n\n".join(units[i] for i in picked)
            rows.append(ranked_row(q.id, picked, q.gold, metrics.evidence_recall(ctx, [units[g] for g in q.gold])))
        out[str(b)] = rows
    return out


def summarise(rows: dict[str, list[dict]], base: dict[str, list[dict]] | None) -> dict:
    """Per budget: mean and interval of recall, R@k and MRR; against ``base`` (paired), the ratio of means and
    the difference, and the questions whose budgeted recall fell."""
    out = {}
    for b, rs in rows.items():
        cell: dict = {}
        for key in ("recall", *(f"r{k}" for k in KS), "rr"):
            vals = [r[key] for r in rs]
            lo, hi = metrics.bootstrap_ci(vals)
            cell[key] = {"mean": metrics.mean(vals), "lo": lo, "hi": hi}
            if base is not None:
                other = [r[key] for r in base[b]]
                cell[key]["ratio"] = metrics.ratio_ci(vals, other)
                cell[key]["paired"] = metrics.paired(vals, other)
        if base is not None:
            cell["recall_lost"] = [
                r["id"] for r, o in zip(rs, base[b], strict=True) if r["recall"] < o["recall"] - 1e-12
            ]
        out[b] = cell
    return out


def ranked_main(args) -> int:
    """``--uri``/``--out``: the ranked-recall comparison (see the module docstring)."""
    import sys

    from driftgraph.llm.tokenizer import count_tokens

    path = args.split if Path(args.split).is_absolute() or Path(args.split).is_file() else args.data / args.split
    qs = data.questions(Path(path))
    units = data.text_units(args.data)
    base = common.engine(args.uri)
    qvec = dict(zip([q.id for q in qs], base.embed([q.question for q in qs]), strict=True))
    configs = {"defaults": {}, **{n: json.loads(v) for n, _, v in (r.partition("=") for r in args.rank)}}
    systems: dict[str, dict] = {}
    for name, over in configs.items():
        systems[name] = {"overrides": over, "rows": local_ranked(args.uri, over, qs, qvec, units, args.budgets)}
        print(name, {b: round(metrics.mean(r["r2"] for r in v), 3) for b, v in systems[name]["rows"].items()})
    vec = vector_ranked(qs, units, base.embed, lambda t: count_tokens(t, "cl100k_base"), args.budgets)
    base.close()
    systems["vector-only chunks"] = {"rows": vec}
    for name, sy in systems.items():
        sy["vs_vector_only"] = summarise(sy["rows"], vec if name != "vector-only chunks" else None)
        if name not in ("defaults", "vector-only chunks"):
            sy["vs_defaults"] = summarise(sy["rows"], systems["defaults"]["rows"])
    out = {
        "questions": str(path),
        "budgets": list(args.budgets),
        "hops": [q.hops for q in qs],
        "systems": systems,
        "machine": machine.describe(),
        "command": "python -m bench local-recall "
        + " ".join(sys.argv[2:] if sys.argv[1:2] == ["local-recall"] else sys.argv[1:]),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1))
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budgets", type=int, nargs="+", default=[2000, 4000, 8000, 12000])
    ap.add_argument("--split", default="questions_dev.jsonl")
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--config", type=Path, default=None, help="driftgraph.yaml (else ./driftgraph.yaml + env)")
    ap.add_argument("--set", action="append", default=[], help="local.KEY=VALUE override (repeatable)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--uri", default=None, help="ranked recall on this Neo4j (password NEO4J_PASSWORD), see above")
    ap.add_argument("--rank", action="append", default=[], help="NAME=JSON local overrides compared (repeatable)")
    ap.add_argument("--out", type=Path, default=None, help="the ranked-recall raw file (with --uri)")
    args = ap.parse_args(argv)
    if args.uri is not None:
        if args.out is None:
            ap.error("--uri needs --out")
        return ranked_main(args)

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
