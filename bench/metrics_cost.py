"""What ``GET /metrics`` costs a request: the ASGI layer and one question's counters, in process.

python -m bench.metrics_cost --out bench/results/raw/metrics_cost.json

A trivial ASGI app answers with and without ``HttpMetrics`` in front (median of 5 rounds of 20,000
requests each), and ``Metrics.finished`` (what one finished question records) is timed on its own.
The engine and the network are left out on purpose: they are the same either way, and the paired serve bench
(``python -m bench serve``) moves by a few ms between runs, far more than what is measured here.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from pathlib import Path
from typing import Any

from bench import machine
from driftgraph.config import ServeConfig
from driftgraph.query.result import ContextInfo, Cost, LocalResult
from driftgraph.query.trace import Trace
from driftgraph.serve import openai_compat, routes_query, routes_retrievals
from driftgraph.serve.metrics import HttpMetrics, Metrics
from driftgraph.serve.runner import Runner

ROUNDS, N = 5, 20_000


class _Matched:  # what Starlette leaves in the scope once its router has matched
    path = "/v1/query/local"


async def _app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    scope["route"] = _Matched
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"{}"})


async def _drop(_: dict[str, Any]) -> None:
    return None


async def _per_request_us(app: Any) -> float:
    scope = {"type": "http", "path": "/v1/query/local", "method": "POST", "headers": [], "root_path": ""}
    start = time.perf_counter()
    for _ in range(N):
        await app(dict(scope), None, _drop)
    return (time.perf_counter() - start) / N * 1e6


def _question_us(m: Metrics) -> float:
    trace = Trace(mode="local", question="q")
    cost = Cost(llm_calls=2, prompt_tokens=9000, completion_tokens=300, embedding_tokens=20)
    result = LocalResult("local", "q", "a", "local-x", ContextInfo("", 7000, 8000), trace, cost, "answered")
    start = time.perf_counter()
    for _ in range(N):
        m.finished("local", "http", 0.1, result)
    return (time.perf_counter() - start) / N * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args()
    cfg = ServeConfig()
    metrics = Metrics(Runner(cfg), cfg)
    routers = (routes_query.router, routes_retrievals.router, openai_compat.router)
    wrapped = HttpMetrics(_app, [r for router in routers for r in router.routes], metrics)
    bare = statistics.median(asyncio.run(_per_request_us(_app)) for _ in range(ROUNDS))
    layered = statistics.median(asyncio.run(_per_request_us(wrapped)) for _ in range(ROUNDS))
    question = statistics.median(_question_us(metrics) for _ in range(ROUNDS))
    out = {
        "machine": machine.describe(),
        "command": "python -m bench.metrics_cost --out " + str(a.out),
        "requests_per_round": N,
        "rounds": ROUNDS,
        "bare_app_us": round(bare, 2),
        "with_http_metrics_us": round(layered, 2),
        "http_layer_us": round(layered - bare, 2),
        "question_counters_us": round(question, 2),
    }
    a.out.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
