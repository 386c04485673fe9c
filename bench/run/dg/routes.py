"""The relational and thematic routes on operation-dulce: recall of gold reports, entities, relationships and
text units at equal budgets, before and after short forms (report summaries) and per-source caps.

python -m bench dg-routes --uri bolt://... [--import] --budgets 2000,4000,8000 --out X.json
python -m bench dg-routes --uri bolt://... --musique --budgets 2000,4000,8000,12000 --out Y.json

``--musique`` (the database holds MuSiQue): evidence recall of the dev questions before and after, the check
that questions routed ``fact`` (no caps) are untouched and the few routed otherwise are not hurt.

Questions and gold ids: ``bench/questions/dulce_routes.jsonl`` (how they were chosen: bench/README.md).
Each configuration is the default ``local`` settings with a few keys changed; ``before`` turns both
mechanisms off, which is the fill as it was (no caps, no short forms). Context only, no LLM.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from bench import metrics, paths
from bench.run import data
from bench.run.dg import common

QUESTIONS = paths.QUESTIONS / "dulce_routes.jsonl"
NO_CAPS = {"report": 1.0, "entity": 1.0, "relationship": 1.0, "chunk": 1.0, "claim": 1.0}
HALF = {"report": 0.5, "entity": 0.5, "relationship": 0.5, "chunk": 0.5, "claim": 0.5}
CONFIGS: dict[str, dict[str, Any]] = {
    "before (no summaries, no caps)": {"report_summary": False, "relational_caps": NO_CAPS, "thematic_caps": NO_CAPS},
    "summaries only": {"relational_caps": NO_CAPS, "thematic_caps": NO_CAPS},
    "summaries + lead source capped at 0.5": {
        "relational_caps": {**NO_CAPS, "relationship": 0.5},
        "thematic_caps": {**NO_CAPS, "report": 0.5},
    },
    "summaries + lead and chunks capped at 0.5": {
        "relational_caps": {**NO_CAPS, "relationship": 0.5, "chunk": 0.5},
        "thematic_caps": {**NO_CAPS, "report": 0.5, "chunk": 0.5},
    },
    "summaries + every source capped at 0.5": {"relational_caps": HALF, "thematic_caps": HALF},
    "caps as the defaults, no summaries": {"report_summary": False},
    "after (defaults)": {},
}
KINDS = {
    "report": "gold_reports",
    "entity": "gold_entities",
    "relationship": "gold_relationships",
    "chunk": "gold_text_units",
}


def load_questions(path: Path = QUESTIONS) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def score(q: dict[str, Any], included: list[Any]) -> dict[str, Any]:
    """Per kind: gold items found / gold items; ``all`` pools every gold item of the question."""
    got = {(c.source, c.id) for c in included}
    found = {k: sum((k, g) in got for g in q[key]) for k, key in KINDS.items()}
    total = {k: len(q[key]) for k, key in KINDS.items()}
    recall = {k: found[k] / total[k] for k in KINDS if total[k]}
    recall["all"] = sum(found.values()) / max(1, sum(total.values()))
    return {"found": found, "total": total, "recall": recall}


def musique(a: argparse.Namespace) -> None:
    from driftgraph.query.local.search import LocalAsk, build_local_context

    eng = common.engine(a.uri)
    eng.check_schema()
    units = data.text_units()
    qs = data.questions()
    budgets = [int(b) for b in a.budgets.split(",") if b]
    qvec = dict(zip([q.id for q in qs], eng.embed([q.question for q in qs]), strict=True))
    runs: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for name in ("before (no summaries, no caps)", "after (defaults)"):
        settings = eng.config.local.model_validate({**eng.config.local.model_dump(), **CONFIGS[name]})
        runs[name] = {}
        for b in budgets:
            rows = []
            for q in qs:
                ctx = build_local_context(
                    eng.runtime.for_run(), LocalAsk(q.question, budget=b, query_vector=qvec[q.id]), settings
                )
                rec = ctx.recorder
                rows.append(
                    {
                        "id": q.id,
                        "hops": q.hops,
                        "route": rec.route.shape if rec.route is not None else None,
                        "recall": metrics.evidence_recall(ctx.text, [units.get(g, "") for g in q.gold]),
                        "tokens": ctx.tokens,
                        "summaries": sum(1 for c in ctx.included if c.form == "summary"),
                    }
                )
            runs[name][str(b)] = rows
    eng.close()
    out = {
        "system": "driftgraph-local",
        "data": "musique",
        "budgets": budgets,
        "configs": {k: CONFIGS[k] for k in runs},
        "runs": runs,
    }
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(out, indent=1))


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--uri", required=True)
    ap.add_argument("--import", dest="do_import", action="store_true", help="import operation-dulce first (reset)")
    ap.add_argument("--budgets", default="2000,4000,8000")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--musique", action="store_true", help="MuSiQue dev evidence recall, before and after")
    a = ap.parse_args(argv)
    if a.musique:
        return musique(a)

    from driftgraph.query.local.search import LocalAsk, build_local_context

    eng = common.engine(a.uri)
    if a.do_import:
        eng.import_graphrag(data.require(data.DULCE), reset=True)
    eng.check_schema()
    qs = load_questions()
    budgets = [int(b) for b in a.budgets.split(",") if b]
    qvec = dict(zip([q["id"] for q in qs], eng.embed([q["question"] for q in qs]), strict=True))
    runs: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for name, changes in CONFIGS.items():
        settings = eng.config.local.model_validate({**eng.config.local.model_dump(), **changes})
        runs[name] = {}
        for b in budgets:
            rows = []
            for q in qs:
                t0 = time.perf_counter()
                ctx = build_local_context(
                    eng.runtime.for_run(), LocalAsk(q["question"], budget=b, query_vector=qvec[q["id"]]), settings
                )
                ms = (time.perf_counter() - t0) * 1000
                rec = ctx.recorder
                tokens_by: dict[str, int] = {}
                for c in ctx.included:
                    tokens_by[c.source] = tokens_by.get(c.source, 0) + c.tokens
                dropped: dict[str, int] = {}
                for item in rec.dropped():
                    dropped[item.reason or "?"] = dropped.get(item.reason or "?", 0) + 1
                rows.append(
                    {
                        "id": q["id"],
                        "shape": q["shape"],
                        "route": rec.route.shape if rec.route is not None else None,
                        "tokens": ctx.tokens,
                        "tokens_by_source": tokens_by,
                        "summaries": sorted(c.id for c in ctx.included if c.form == "summary"),
                        "dropped": dropped,
                        "ms": ms,
                        **score(q, ctx.included),
                    }
                )
            runs[name][str(b)] = rows
    eng.close()
    out = {
        "system": "driftgraph-local",
        "data": "operation-dulce",
        "questions": str(QUESTIONS.name),
        "budgets": budgets,
        "configs": CONFIGS,
        "runs": runs,
    }
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(out, indent=1))
