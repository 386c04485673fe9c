"""Cost of driftgraph global search per question on operation-dulce: full level vs dynamic, fake model.

python -m bench global-cost --out bench/results/global_cost_driftgraph.json [--level 2] [--reimport]
python -m bench global-cost --data musique --questions 5 --reimport --out bench/results/global_cost_musique.json

Neo4j from NEO4J_URI / NEO4J_PASSWORD (the data set is imported, without embeddings, when the database has
no communities, or with --reimport; operation-dulce questions are a fixed list of five, musique uses the first
N dev questions). The model is the fake OpenAI-compatible server of the tests with the scripted
global/basic responder (tests/support/global_fake.py: rates and maps by word overlap with the question),
so both systems can be measured against identical, instant model behaviour. Reported per question and mode:
chat calls (rating / map / reduce), prompt tokens as the server counted them (chars/4, what the ledger
shows) and as cl100k counts the request messages, and the reports read.
"""

from __future__ import annotations

import argparse
import json
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


def _tokens(requests: list[dict[str, Any]]) -> int:
    from driftgraph.llm.tokenizer import count_tokens

    return sum(count_tokens(m.get("content") or "", "cl100k_base") for r in requests for m in r["messages"])


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", choices=("dulce", "musique"), default="dulce")
    ap.add_argument("--questions", type=int, default=5, help="musique: how many dev questions")
    ap.add_argument("--level", type=int, default=2)
    ap.add_argument("--reimport", action="store_true")
    ap.add_argument("--map-cap", type=int, default=None, help="global.map_cap (default: the config default)")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)

    from driftgraph.api import open_engine
    from driftgraph.config import load_config
    from tests.support.fake_openai import FakeOpenAI
    from tests.support.global_fake import responder, schema_name

    fake = FakeOpenAI(responder).start()
    try:
        cfg = load_config(None)
        cfg.llm = cfg.llm.model_copy(update={"base_url": fake.base_url, "api_key": "bench", "max_retries": 0})
        if a.map_cap is not None:
            cfg.global_ = cfg.global_.model_copy(update={"map_cap": a.map_cap})
        rows = []
        with open_engine(cfg) as eng:
            root = data.DULCE if a.data == "dulce" else data.MUSIQUE
            if a.reimport or not eng.store.read("admin/counts")[0]["communities"]:
                eng.import_graphrag(data.require(root), reset=True, embed=False)
            questions = QUESTIONS if a.data == "dulce" else [q.question for q in data.questions()[: a.questions]]
            for q in questions:
                for mode in ("full", "dynamic"):
                    fake.requests.clear()
                    t0 = time.perf_counter()
                    res = eng.query_global(q, level=a.level, dynamic=mode == "dynamic")
                    seconds = time.perf_counter() - t0
                    reqs = fake.chat_requests()
                    t = res.trace
                    rows.append(
                        {
                            "question": q,
                            "mode": mode,
                            "chat_calls": len(reqs),
                            "rate_calls": sum(1 for r in reqs if schema_name(r) == "report_ratings"),
                            "map_calls": sum(1 for r in reqs if schema_name(r) == "key_points"),
                            "reduce_calls": sum(1 for r in reqs if schema_name(r) is None),
                            "prompt_tokens_server": res.cost.prompt_tokens,
                            "prompt_tokens_cl100k": _tokens(reqs),
                            "batches": t["map"]["batches"],
                            "reports_visited": t["selection"]["visited"],
                            "reports_mapped": t["selection"]["selected"],
                            "reports_used": sum(1 for r in t["reports"] if r["stage"] == "used"),
                            "reduce_context_tokens": res.context.tokens,
                            "stop_reason": res.to_dict()["stop_reason"],
                            "seconds": round(seconds, 3),
                        }
                    )
    finally:
        fake.stop()
    summary = {}
    for mode in ("full", "dynamic"):
        sel = [r for r in rows if r["mode"] == mode]
        summary[mode] = {
            k: round(sum(r[k] for r in sel) / len(sel), 1)
            for k in ("chat_calls", "map_calls", "rate_calls", "prompt_tokens_server", "prompt_tokens_cl100k")
        }
    out = {
        "system": "driftgraph",
        "data": root.name,
        "level": a.level,
        "map_cap": cfg.global_.map_cap,
        "machine": describe(),
        "rows": rows,
        "mean": summary,
    }
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(out, indent=2))
    print(f"{'question':<66} {'mode':<8} {'calls':>5} {'rate':>4} {'map':>4} {'prompt tok':>10} {'cl100k':>7}")
    for r in rows:
        print(
            f"{r['question'][:66]:<66} {r['mode']:<8} {r['chat_calls']:>5} {r['rate_calls']:>4} {r['map_calls']:>4} "
            f"{r['prompt_tokens_server']:>10} {r['prompt_tokens_cl100k']:>7}"
        )
    for mode, s in summary.items():
        print(f"mean {mode:<8} {s}")
