"""Cost of driftgraph DRIFT per question on operation-dulce with the fake model: chat calls and prompt tokens.

python -m bench drift-cost --out bench/results/drift_cost_driftgraph.json [--reimport] [--seed 0]

Neo4j from NEO4J_URI / NEO4J_PASSWORD (operation-dulce is imported when the database has no communities,
or with --reimport). The model is the tests' fake OpenAI-compatible server with the DRIFT tree responder
(tests/support/drift_fakes.py), in two behaviours:

* ``worst``: every answer proposes follow-ups and the score keeps rising (never sufficient, no plateau), so
  the run goes until ``max_depth`` or the budget: the worst case, as GraphRAG's 67 calls are its worst case;
* ``flat``: every answer scores the same, so the plateau rule stops the run after one epoch.

Prompt tokens are reported as the server counted them (chars/4, what the ledger shows) and as cl100k counts
the request messages (what GraphRAG's ~380k per question is measured in).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from pathlib import Path
from typing import Any

from bench.run import data
from bench.run.machine import describe

QUESTIONS = [
    "What are the main themes of the story?",
    "What is the role of the Paranormal Military Squad at Dulce base?",
    "What happened in the mainframe room?",
    "How do the agents communicate with the alien intelligence?",
    "Who leads the team and how are decisions made?",
]
SCENARIOS = {
    "worst": lambda q, depth: min(85, 40 + 10 * depth),
    "flat": lambda q, depth: 50,
}


def _tokens(requests: list[dict[str, Any]]) -> int:
    from driftgraph.llm.tokenizer import count_tokens

    return sum(count_tokens(m.get("content") or "", "cl100k_base") for r in requests for m in r["messages"])


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reimport", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-llm-calls", type=int, default=None, help="drift.max_llm_calls (a matched call budget)")
    ap.add_argument("--scenarios", default=",".join(SCENARIOS), help="comma-separated: worst, flat")
    ap.add_argument("--reps", type=int, default=1, help="runs per question (same seed: the same steps expected)")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)

    from bench.run.fake_llm import layer_of
    from driftgraph.api import open_engine
    from driftgraph.config import load_config
    from tests.support.drift_fakes import DULCE_LAYERS, request_kind, tree_responder
    from tests.support.fake_openai import FakeOpenAI

    fake = FakeOpenAI().start()
    rows = []
    try:
        cfg = load_config(None)
        cfg.llm = cfg.llm.model_copy(update={"base_url": fake.base_url, "api_key": "bench", "max_retries": 0})
        if a.max_llm_calls is not None:
            cfg.drift = cfg.drift.model_copy(update={"max_llm_calls": a.max_llm_calls})
        scenarios = {name: SCENARIOS[name] for name in a.scenarios.split(",")}
        with open_engine(cfg) as eng:
            if a.reimport or not eng.store.read("admin/counts")[0]["communities"]:
                eng.import_graphrag(data.require(data.DULCE), reset=True)
            for scenario, score in scenarios.items():
                fake.responder = tree_responder(score=score, layers=DULCE_LAYERS)
                for q, rep in itertools.product(QUESTIONS, range(a.reps)):
                    fake.requests.clear()
                    t0 = time.perf_counter()
                    res = eng.query_drift(q, seed=a.seed)
                    seconds = time.perf_counter() - t0
                    reqs = fake.chat_requests()
                    kinds = [request_kind(r) for r in reqs]
                    steps = res.to_dict()["steps"]
                    rows.append(
                        {
                            "question": q,
                            "scenario": scenario,
                            "rep": rep,
                            "chat_calls": len(reqs),
                            "ledger_calls": res.cost.llm_calls,
                            "hyde_calls": kinds.count("hyde"),
                            "primer_calls": kinds.count("drift_primer"),
                            "step_calls": kinds.count("drift_step"),
                            "reduce_calls": kinds.count("reduce"),
                            "prompt_tokens_server": res.cost.prompt_tokens,
                            "prompt_tokens_cl100k": _tokens(reqs),
                            "steps_done": sum(1 for s in steps if s["status"] == "done"),
                            "steps_uncovered": sum(1 for s in steps if s["status"] == "uncovered"),
                            "step_questions": [s["query"] for s in steps if s["status"] == "done"],
                            "step_layers": [layer_of(s["query"]) for s in steps if s["status"] == "done"],
                            "epochs": len(res.to_dict()["epochs"]),
                            "stop_reason": res.to_dict()["stop_reason"],
                            "seconds": round(seconds, 3),
                        }
                    )
    finally:
        fake.stop()
    keys = ("chat_calls", "step_calls", "prompt_tokens_server", "prompt_tokens_cl100k")
    summary = {}
    for scenario in scenarios:
        sel = [r for r in rows if r["scenario"] == scenario]
        summary[scenario] = {k: round(sum(r[k] for r in sel) / len(sel), 1) for k in keys}
        summary[scenario]["max_chat_calls"] = max(r["chat_calls"] for r in sel)
    out = {
        "system": "driftgraph",
        "mode": "drift",
        "data": "operation-dulce",
        "seed": a.seed,
        "command": "python -m bench drift-cost " + " ".join(argv if argv is not None else sys.argv[2:]),
        "drift": cfg.drift.model_dump(),
        "machine": describe(),
        "rows": rows,
        "mean": summary,
    }
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(out, indent=2))
    print(f"{'question':<62} {'scen':<5} {'calls':>5} {'steps':>5} {'prompt tok':>10} {'cl100k':>7} stop")
    for r in rows:
        print(
            f"{r['question'][:62]:<62} {r['scenario']:<5} {r['chat_calls']:>5} {r['step_calls']:>5} "
            f"{r['prompt_tokens_server']:>10} {r['prompt_tokens_cl100k']:>7} {r['stop_reason']}"
        )
    for scenario, s in summary.items():
        print(f"mean {scenario:<5} {s}")
