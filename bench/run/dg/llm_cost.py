"""driftgraph DRIFT and global search against the fake OpenAI-compatible server: calls and prompt tokens.

python -m bench dg-llm-cost --mode drift|global --uri bolt://... --root DIR --reps 1 --out X.json

The data set is imported (reset) first. Same server code, same replies and same cl100k counting as the
GraphRAG side (``bench.run.gr.llm_cost``); driftgraph's DRIFT is seeded, so one repetition is enough, but
``--reps`` runs it again to show that.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from bench.run import data, fake_llm
from bench.run.dg import common


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=("drift", "global"), required=True)
    ap.add_argument("--uri", required=True)
    ap.add_argument("--root", type=Path, default=data.DULCE)
    ap.add_argument("--questions", default=json.dumps(fake_llm.DULCE_QUESTIONS), help="JSON list of questions")
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--no-import", action="store_true")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)

    from tests.support.fake_openai import FakeOpenAI
    from tests.support.global_fake import responder as global_responder

    questions = json.loads(a.questions)
    fake = FakeOpenAI().start()
    rows = []
    try:
        llm = {"base_url": fake.base_url, "api_key": "bench", "max_retries": 0}
        eng = common.engine(a.uri, extra={"llm": llm})
        if not a.no_import:
            eng.import_graphrag(data.require(a.root), reset=True)
        if a.mode == "drift":
            for scenario, responder in fake_llm.drift_scenarios().items():
                fake.responder = responder
                for q in questions:
                    for rep in range(a.reps):
                        fake.requests.clear()
                        t0 = time.perf_counter()
                        res = eng.query_drift(q)
                        seconds = time.perf_counter() - t0
                        steps = res.to_dict()["steps"]
                        rows.append(
                            {
                                "question": q,
                                "scenario": scenario,
                                "rep": rep,
                                **fake_llm.chat_cost(fake.requests),
                                "ledger_calls": res.cost.llm_calls,
                                "steps_done": sum(1 for s in steps if s.get("status") == "done"),
                                "steps_uncovered": sum(1 for s in steps if s.get("status") == "uncovered"),
                                "stop_reason": res.stop_reason,
                                "seconds": seconds,
                            }
                        )
        else:
            fake.responder = global_responder
            for mode in ("full", "dynamic"):
                for q in questions:
                    fake.requests.clear()
                    t0 = time.perf_counter()
                    res = eng.query_global(q, level=2, dynamic=mode == "dynamic")
                    rows.append(
                        {
                            "question": q,
                            "mode": mode,
                            **fake_llm.chat_cost(fake.requests),
                            "stop_reason": res.stop_reason,
                            "seconds": time.perf_counter() - t0,
                        }
                    )
        eng.close()
    finally:
        fake.stop()
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps({"system": f"driftgraph-{a.mode}", "data": a.root.name, "rows": rows}, indent=1))
