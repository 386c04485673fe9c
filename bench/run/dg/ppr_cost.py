"""What personalized PageRank costs per question: local.ranking ppr, with and without its neighbourhood fetch
(``ppr.fetch``), against score (no walk), what the bridge's third hop under the walk adds (``max_hops`` 3,
the default, against 2, the previous default), what hopping across synonym edges adds (``bridge_synonyms``),
what the entity seeds of the second hop add (``entity_seed_chunks`` 1, the default, against 0), what the
longer walk costs (damping 0.85 to convergence against 0.5 stopped at 50 iterations) and what the RELATED
edges among the known entities cost (``ppr.known_relations``, read in the bridge's query), same run.

python -m bench ppr-cost --uri bolt://... --out bench/results/raw/ppr_cost.json [--reps 3] [--budget 8000]

Every variant assembles every MuSiQue dev question's context (vector handed in, no trace write), alternating
question by question so load drifts hit them alike; per variant the retrieval + assembly seconds, the part
spent in the expansion and what follows it (``expand_s``: the bridge, the PPR fetch and walk), and the
round trips. The raw file records the machine, its load and the command; compare the ratio, not the ms.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from bench import metrics
from bench.run import data, machine
from bench.run.dg import common

VARIANTS: dict[str, dict] = {
    "score": {"ranking": "score"},
    "ppr": {"ranking": "ppr", "ppr": {"fetch": True}},
    "ppr_no_fetch": {"ranking": "ppr", "ppr": {"fetch": False}},
    "ppr_no_bridge": {"ranking": "ppr", "ppr": {"fetch": False}, "max_hops": 2},
    "ppr_no_synonyms": {"ranking": "ppr", "ppr": {"fetch": False}, "bridge_synonyms": False},
    "ppr_no_fetch_no_entity_seeds": {"ranking": "ppr", "ppr": {"fetch": False}, "entity_seed_chunks": 0},
    "ppr_previous_walk": {
        "ranking": "ppr",
        "ppr": {"fetch": False, "damping": 0.5, "mass_exponent": 1.0, "iterations": 50, "known_relations": False},
    },
    "ppr_no_known_relations": {"ranking": "ppr", "ppr": {"fetch": False, "known_relations": False}},
}
RANKINGS = tuple(VARIANTS)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--uri", required=True)
    ap.add_argument("--budget", type=int, default=8000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)

    from driftgraph.query.local.search import LocalAsk, build_local_context

    engines = {r: common.engine(a.uri, extra={"local": local}) for r, local in VARIANTS.items()}
    qs = data.questions()
    qvec = dict(zip([q.id for q in qs], engines["score"].embed([q.question for q in qs]), strict=True))
    keys = ("total_ms", "expand_ms", "round_trips")
    runs: dict[str, dict[str, list[float]]] = {r: {k: [] for k in keys} for r in RANKINGS}
    for eng in engines.values():  # warm-up: driver, pools, plan cache
        build_local_context(
            eng.runtime.for_run(),
            LocalAsk(qs[0].question, budget=a.budget, query_vector=qvec[qs[0].id]),
            eng.config.local,
        )
    for _ in range(a.reps):
        for q in qs:
            for r, eng in engines.items():
                ctx = build_local_context(
                    eng.runtime.for_run(),
                    LocalAsk(q.question, budget=a.budget, query_vector=qvec[q.id]),
                    eng.config.local,
                )
                t = ctx.recorder.timings
                runs[r]["total_ms"].append(1000 * t["retrieval_assembly_s"])
                runs[r]["expand_ms"].append(1000 * t["expand_s"])
                runs[r]["round_trips"].append(ctx.recorder.round_trips)
    for eng in engines.values():
        eng.close()
    p50 = {r: {k: metrics.percentile(v, 50) for k, v in runs[r].items()} for r in RANKINGS}
    out = {
        "machine": machine.describe(),
        "command": "python -m bench " + " ".join(sys.argv[1:]),
        "budget": a.budget,
        "reps": a.reps,
        "questions": len(qs),
        "p50": p50,
        "ratio_total_p50": p50["ppr"]["total_ms"] / p50["score"]["total_ms"],
        "ratio_total_p50_no_fetch": p50["ppr_no_fetch"]["total_ms"] / p50["score"]["total_ms"],
        "ratio_total_p50_bridge": p50["ppr_no_fetch"]["total_ms"] / p50["ppr_no_bridge"]["total_ms"],
        "ratio_total_p50_synonyms": p50["ppr_no_fetch"]["total_ms"] / p50["ppr_no_synonyms"]["total_ms"],
        "ratio_total_p50_entity_seeds": p50["ppr_no_fetch"]["total_ms"]
        / p50["ppr_no_fetch_no_entity_seeds"]["total_ms"],
        "ratio_total_p50_walk": p50["ppr_no_fetch"]["total_ms"] / p50["ppr_previous_walk"]["total_ms"],
        "ratio_total_p50_known_relations": p50["ppr_no_fetch"]["total_ms"] / p50["ppr_no_known_relations"]["total_ms"],
        "runs": runs,
    }
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(out, indent=1))
    shown = ("p50", "ratio_total_p50", "ratio_total_p50_no_fetch", "ratio_total_p50_bridge")
    shown += ("ratio_total_p50_entity_seeds", "ratio_total_p50_walk", "ratio_total_p50_known_relations")
    print(json.dumps({k: out[k] for k in shown}, indent=1))
