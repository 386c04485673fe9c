"""driftgraph basic and local search, context only, on the imported MuSiQue index: the systems GraphRAG's
basic search is paired against (python -m bench basic).

python -m bench dg-basic --uri bolt://... --budgets 2000,4000,8000,12000 --out X.json

Both get the question's vector handed in (embedding is not what is compared); ``build_basic_context`` with the
``basic`` defaults and ``build_local_context`` with the ``local`` defaults, at each fixed budget.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from bench import metrics
from bench.run import data
from bench.run.dg import common


def main(argv: list[str] | None = None) -> None:
    ap = common.musique_args(argparse.ArgumentParser())
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)

    from driftgraph.query.basic.search import build_basic_context
    from driftgraph.query.local.search import LocalAsk, build_local_context

    eng = common.engine(a.uri)
    eng.check_schema()
    units = data.text_units(a.root)
    qs = data.questions(a.questions) if a.questions else data.questions()
    budgets = [int(b) for b in a.budgets.split(",") if b]
    qvec = dict(zip([q.id for q in qs], eng.embed([q.question for q in qs]), strict=True))
    systems: dict[str, dict[str, list]] = {"driftgraph basic": {}, "driftgraph local": {}}
    for b in budgets:
        for name in systems:
            rows = []
            for q in qs:
                rt = eng.runtime.for_run()
                if name == "driftgraph basic":
                    ctx = build_basic_context(rt, q.question, eng.config.basic, budget=b, query_vector=qvec[q.id])
                    text, tokens = ctx.text, ctx.tokens
                else:
                    lc = build_local_context(
                        rt, LocalAsk(q.question, budget=b, query_vector=qvec[q.id]), eng.config.local
                    )
                    text, tokens = lc.text, lc.tokens
                gold = [units.get(g, "") for g in q.gold]
                rows.append(
                    {"id": q.id, "hops": q.hops, "recall": metrics.evidence_recall(text, gold), "tokens": tokens}
                )
            systems[name][str(b)] = rows
    eng.close()
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps({"budgets": budgets, "systems": systems}, indent=1))
