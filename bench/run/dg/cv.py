"""Choose the multi-hop weights by 5-fold cross-validation on the MuSiQue dev split.

python -m bench cv --uri bolt://... --out X.json

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


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--uri", required=True)
    ap.add_argument("--grid", default=None, help="JSON {name: overrides} instead of GRID")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)

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
