"""Choose the multi-hop weights by 5-fold cross-validation on the MuSiQue dev split.

python -m bench cv --uri bolt://... --out X.json
python -m bench cv --ranking --uri bolt://... --out X.json   # local.chunk_rank and its weights (rank_cv)

Every configuration of ``GRID`` (overrides of ``local``) assembles a context for every question at each
budget; a question's score is its evidence recall averaged over the budgets. ``bench.metrics.cross_validate``
then picks, per fold, the configuration best on the other four folds and scores it on the held-out one, so
the reported figure is never measured on the questions that chose it; the fold spread says how stable that is.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from bench import metrics
from bench.run import data
from bench.run.dg import common

BUDGETS = (2000, 4000, 8000, 12000)
# the first entry is the one a tie goes to: the shipped defaults (the bridge's third hop across shared
# entities and synonym edges, then the walk over everything found). Kept small (each configuration is 200
# assemblies); wider frontiers, bridge_max_df 200/1000 and max_hops 4 measured the same as the bridge's
# defaults, and ppr.frontier 40 the same as 20.
GRID: dict[str, dict] = {
    "defaults (ppr over 3 hops and the RELATED edges among known entities, damping 0.85, root of the mass, "
    "weight 1, no fetch, passage temperature 0.8)": {},
    "no RELATED edges among the known entities (the previous default)": {"ppr": {"known_relations": False}},
    "walk damping 0.5, linear mass, no RELATED edges (the default before 2026-12-03)": {
        "ppr": {"damping": 0.5, "mass_exponent": 1.0, "known_relations": False}
    },
    "ppr over 2 hops, no bridge (2 trips; the default before 2026-12-02)": {"max_hops": 2},
    "bridge without synonym edges": {"bridge_synonyms": False},
    "score ranking, no walk (3 hops)": {"ranking": "score"},
    "ppr weight 0.5": {"ppr": {"weight": 0.5}},
    "ppr weight 3": {"ppr": {"weight": 3.0}},
    "ppr with the fetch (4 trips)": {"ppr": {"fetch": True}},
    "only chunk hits seed the second hop": {"entity_seed_chunks": 0},
    "chunk hits restart in proportion to similarity": {"ppr": {"passage_relative_temperature": 0.0}},
    "passage relative temperature 1.6": {"ppr": {"passage_relative_temperature": 1.6}},
}


RANK_BUDGET = 2000  # the presentation order is scored on the 2k context (its first 2 / 5 chunks)
# local.chunk_rank graph: every weight combination; "score" (today's order) first, so a tie goes to it
RANK_WEIGHTS = {
    "ppr": (0.0, 0.2, 0.5, 1.0, 2.0),
    "entities": (0.0, 0.05, 0.1),
    "seed": (0.0, 0.1, 0.3),
    "bridge": (0.0, 0.1),
    "chain": (0.0, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0),
}


def rank_grid() -> dict[str, dict]:
    """``chunk_rank`` configurations: the selection order, similarity alone, then each weight combination."""
    import itertools

    grid: dict[str, dict] = {"score (selection order)": {"chunk_rank": "score"}, "vector": {"chunk_rank": "vector"}}
    keys = list(RANK_WEIGHTS)
    for combo in itertools.product(*(RANK_WEIGHTS[k] for k in keys)):
        w = dict(zip(keys, combo, strict=True))
        grid["graph " + " ".join(f"{k}={v:g}" for k, v in w.items())] = {"chunk_rank": "graph", "chunk_rank_weights": w}
    return grid


def rank_cv(uri: str, out: Path) -> None:
    """Choose ``chunk_rank`` and its weights by 5-fold CV on the dev split; a question's score is the mean of its
    R@2 and R@5 in the 2k context. The selection does not depend on ``chunk_rank`` (present.py only reorders
    what entered), so each question is assembled once with the defaults and every configuration reorders that
    same context with ``present`` (the held-out measurement, ``local-recall --uri``, runs each end to end)."""
    from driftgraph.config import LocalConfig
    from driftgraph.query.local.present import present
    from driftgraph.query.local.search import LocalAsk, build_local_context

    units = data.text_units()
    qs = data.questions()
    eng = common.engine(uri)
    qvec = dict(zip([q.id for q in qs], eng.embed([q.question for q in qs]), strict=True))
    contexts = []
    for q in qs:
        ctx = build_local_context(
            eng.runtime.for_run(), LocalAsk(q.question, budget=RANK_BUDGET, query_vector=qvec[q.id]), eng.config.local
        )
        contexts.append((q, list(ctx.included), metrics.evidence_recall(ctx.text, [units[g] for g in q.gold])))
    base = eng.config.local.model_dump(mode="json")
    eng.close()
    per_config: dict[str, dict] = {}
    for name, over in rank_grid().items():
        settings = LocalConfig(**{**base, **over})
        rows: dict[str, list[float]] = {"r2": [], "r5": [], "rr": []}
        for q, included, _ in contexts:
            shown = present(included, settings)
            order = [c.id for c in sorted((c for c in shown if c.source == "chunk"), key=lambda c: c.rank)]
            rows["r2"].append(metrics.ranked_recall(order, q.gold, 2))
            rows["r5"].append(metrics.ranked_recall(order, q.gold, 5))
            rows["rr"].append(metrics.reciprocal_rank(order, q.gold))
        score = [(a + b) / 2 for a, b in zip(rows["r2"], rows["r5"], strict=True)]
        per_config[name] = {"overrides": over, "score": score, **rows}
    cv = metrics.cross_validate({n: c["score"] for n, c in per_config.items()}, k=5, seed=0)
    held = {key: [0.0] * len(qs) for key in ("r2", "r5", "rr")}
    for fold, f in zip(metrics.folds(len(qs), 5, 0), cv["folds"], strict=True):
        for i in fold:
            for key in held:
                held[key][i] = per_config[f["chosen"]][key][i]
    best_all = max(per_config, key=lambda n: (metrics.mean(per_config[n]["score"]), -list(per_config).index(n)))
    result = {
        "budget": RANK_BUDGET,
        "objective": "mean of R@2 and R@5 in the context's order",
        "recall": [r for _, _, r in contexts],
        "configs": per_config,
        "cv": cv,
        "held_out": {k: metrics.mean(v) for k, v in held.items()},
        "chosen_on_all_dev": best_all,
        "command": "python -m bench cv --ranking " + f"--uri {uri} --out {out}",
    }
    for name in ("score (selection order)", "vector", best_all):
        print(name, {k: round(metrics.mean(per_config[name][k]), 3) for k in ("r2", "r5", "rr")})
    print("cv", [f["chosen"] for f in cv["folds"]], {k: round(v, 3) for k, v in result["held_out"].items()})
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--uri", required=True)
    ap.add_argument("--grid", default=None, help="JSON {name: overrides} instead of GRID")
    ap.add_argument("--ranking", action="store_true", help="choose local.chunk_rank (the presentation order)")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)
    if a.ranking:
        rank_cv(a.uri, a.out)
        return

    grid = json.loads(a.grid) if a.grid else GRID
    units = data.text_units()
    qs = data.questions()
    base = common.engine(a.uri)
    qvec = dict(zip([q.id for q in qs], base.embed([q.question for q in qs]), strict=True))
    per_config: dict[str, dict] = {}
    for name, over in grid.items():
        ranked: dict[str, list[str]] = {}
        recall = common.local_recall(a.uri, over, qs, qvec, units, BUDGETS, ranked=ranked)
        score = [metrics.mean(recall[str(b)][i] for b in BUDGETS) for i in range(len(qs))]
        rk = {f"r{k}": [metrics.ranked_recall(ranked[q.id], q.gold, k) for q in qs] for k in (2, 5)}
        per_config[name] = {"overrides": over, "recall": recall, "score": score, **rk}
        print(name, {b: round(metrics.mean(v), 3) for b, v in recall.items()}, flush=True)
    cv = metrics.cross_validate({n: c["score"] for n, c in per_config.items()}, k=5, seed=0)
    held = {}
    for b in BUDGETS:
        vals = [0.0] * len(qs)
        for fold, f in zip(metrics.folds(len(qs), 5, 0), cv["folds"], strict=True):
            for i in fold:
                vals[i] = per_config[f["chosen"]]["recall"][str(b)][i]
        held[str(b)] = metrics.mean(vals)
    out = {
        "budgets": list(BUDGETS),
        "hops": [q.hops for q in qs],
        "configs": per_config,
        "cv": cv,
        "held_out_by_budget": held,
    }
    base.close()
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(out, indent=1))
