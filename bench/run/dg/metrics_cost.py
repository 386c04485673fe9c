"""What the serve layers cost a request: ``/metrics``' ASGI layer, ``X-Request-Id``'s, a question's counters and
log line, in process.

python -m bench metrics-cost --out bench/results/raw/metrics_cost.json

A trivial ASGI app answers bare, with ``HttpMetrics`` and with ``RequestId`` in front too (median of 5 rounds
of 20,000 requests each); ``Metrics.finished`` (what one finished question records) and the question's log
line (to a file, as ``serve`` writes it) are timed on their own. The engine and the network are left out on
purpose: they are the same either way, and the paired serve bench (``python -m bench serve``) moves by a few
ms between runs, far more than what is measured here.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.run import machine
from driftgraph.config import ServeConfig
from driftgraph.query.result import ContextInfo, Cost, LocalResult
from driftgraph.query.trace import Trace
from driftgraph.serve import openai_compat, routes_query, routes_retrievals
from driftgraph.serve.metrics import HttpMetrics, Metrics
from driftgraph.serve.request_id import RequestId
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


def _log_line_us() -> float:
    """The per-question line ``ServeState.query`` writes, through a handler like ``serve``'s, to a file."""
    logger = logging.getLogger("bench.run.dg.metrics_cost")
    logger.propagate = False
    logger.setLevel(logging.INFO)
    with tempfile.TemporaryDirectory() as tmp:
        handler = logging.FileHandler(Path(tmp) / "serve.log")
        logger.addHandler(handler)
        start = time.perf_counter()
        for _ in range(N):
            logger.info(
                "question %s via %s: %s in %.0f ms, %d context tokens, %d LLM calls, %d+%d tokens, retrieval %s",
                "local",
                "http",
                "answered",
                152.0,
                7000,
                2,
                9000,
                300,
                "local-20261202T023849-cbf239ea",
            )
        spent = (time.perf_counter() - start) / N * 1e6
        logger.removeHandler(handler)
        handler.close()
    return spent


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)
    cfg = ServeConfig()
    metrics = Metrics(Runner(cfg), cfg)
    routers = (routes_query.router, routes_retrievals.router, openai_compat.router)
    wrapped = HttpMetrics(_app, [r for router in routers for r in router.routes], metrics)
    bare = statistics.median(asyncio.run(_per_request_us(_app)) for _ in range(ROUNDS))
    layered = statistics.median(asyncio.run(_per_request_us(wrapped)) for _ in range(ROUNDS))
    tagged = statistics.median(asyncio.run(_per_request_us(RequestId(wrapped))) for _ in range(ROUNDS))
    question = statistics.median(_question_us(metrics) for _ in range(ROUNDS))
    log_line = statistics.median(_log_line_us() for _ in range(ROUNDS))
    out = {
        "machine": machine.describe(),
        "command": "python -m bench metrics-cost --out " + str(a.out),
        "requests_per_round": N,
        "rounds": ROUNDS,
        "bare_app_us": round(bare, 2),
        "with_http_metrics_us": round(layered, 2),
        "http_layer_us": round(layered - bare, 2),
        "with_request_id_too_us": round(tagged, 2),
        "request_id_layer_us": round(tagged - layered, 2),
        "question_counters_us": round(question, 2),
        "question_log_line_us": round(log_line, 2),
    }
    a.out.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(out, indent=1))
