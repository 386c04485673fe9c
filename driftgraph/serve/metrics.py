"""``GET /metrics``: what the server did, in Prometheus' text format (``serve.metrics``, on by default).

A team running driftgraph as a service needs its rates, latencies, error codes and token spend on the same
dashboards as everything else. Two sources fill one registry per app (never the process-global one, so two
apps in one process, or the tests, do not add up):

- ``HttpMetrics``, a pure ASGI layer outside the auth guard (a 401 counts too), labels each request by its
  route template (``/v1/retrievals/{retrieval_id}``, ``unmatched`` for unknown paths), so label values stay a
  fixed set whatever clients send, and by method (a made-up one counts as ``other``); a streamed answer is
  timed to its last byte.
- ``ServeState.query``, the one engine call the HTTP routes, the OpenAI-compatible endpoint and ``/mcp``
  make (on the worker thread), reports each question to ``Metrics.finished`` or ``Metrics.failed``: by
  mode, interface and outcome (the stop reason, or the error type), its duration, context size and what it
  spent (chat calls, tokens, cache hits, embedding tokens). A question that outlived
  ``serve.request_timeout_s`` is counted when it really ends, with what it spent.

Question text never becomes a label.
"""

from __future__ import annotations

import time
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, Info, generate_latest
from starlette.routing import Match

from driftgraph import SearchResult, __version__
from driftgraph.config import ServeConfig
from driftgraph.serve.runner import Runner

HTTP_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
QUERY_BUCKETS = (0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
TOKEN_BUCKETS = (250, 500, 1000, 2000, 4000, 8000, 16000, 32000, 64000, 128000)


class Metrics:
    """The registry and every series the server exports."""

    def __init__(self, runner: Runner, cfg: ServeConfig) -> None:
        r = self.registry = CollectorRegistry()
        self.http_requests = Counter(
            "driftgraph_http_requests", "HTTP requests answered", ["route", "method", "status"], registry=r
        )
        self.http_seconds = Histogram(
            "driftgraph_http_request_duration_seconds",
            "HTTP request time to the last byte of the response",
            ["route", "method"],
            buckets=HTTP_BUCKETS,
            registry=r,
        )
        self.queries = Counter(
            "driftgraph_queries",
            "questions the engine finished, by outcome (stop reason, or error type)",
            ["mode", "interface", "outcome"],
            registry=r,
        )
        self.query_seconds = Histogram(
            "driftgraph_query_duration_seconds", "engine time per question", ["mode"], buckets=QUERY_BUCKETS, registry=r
        )
        self.context_tokens = Histogram(
            "driftgraph_context_tokens",
            "context tokens per finished question",
            ["mode"],
            buckets=TOKEN_BUCKETS,
            registry=r,
        )
        self.llm_calls = Counter("driftgraph_llm_calls", "chat-model calls made for questions", ["mode"], registry=r)
        self.llm_tokens = Counter(
            "driftgraph_llm_tokens", "chat-model tokens, prompt or completion", ["mode", "kind"], registry=r
        )
        self.cache_hits = Counter(
            "driftgraph_llm_cache_hits", "chat calls answered from the cache", ["mode"], registry=r
        )
        self.embedding_tokens = Counter(
            "driftgraph_embedding_tokens", "tokens embedded for questions", ["mode"], registry=r
        )
        self.pruned = Counter(
            "driftgraph_retrievals_pruned", "stored retrievals deleted by serve.trace_retention_days", registry=r
        )
        self.prune_failures = Counter("driftgraph_prune_failures", "trace retention prunes that failed", registry=r)
        running = Gauge("driftgraph_questions_running", "questions on worker threads now", registry=r)
        running.set_function(lambda: runner.running)
        Gauge("driftgraph_max_concurrency", "serve.max_concurrency", registry=r).set(cfg.max_concurrency)
        Info("driftgraph_build", "the driftgraph version serving", registry=r).info({"version": __version__})

    def finished(self, mode: str, interface: str, seconds: float, result: SearchResult) -> None:
        """One question that ended with a result: its outcome, time, context size and spend."""
        self.query_seconds.labels(mode).observe(seconds)
        self.queries.labels(mode, interface, result.stop_reason or "answered").inc()
        self.context_tokens.labels(mode).observe(result.context.tokens)
        cost = result.cost
        self.llm_calls.labels(mode).inc(cost.llm_calls)
        self.llm_tokens.labels(mode, "prompt").inc(cost.prompt_tokens)
        self.llm_tokens.labels(mode, "completion").inc(cost.completion_tokens)
        self.cache_hits.labels(mode).inc(cost.cache_hits)
        self.embedding_tokens.labels(mode).inc(cost.embedding_tokens)

    def failed(self, mode: str, interface: str, seconds: float, error_type: str) -> None:
        """One question that raised: counted under its error type (``serve/errors.py``)."""
        self.query_seconds.labels(mode).observe(seconds)
        self.queries.labels(mode, interface, error_type).inc()

    def exposition(self) -> tuple[bytes, str]:
        return generate_latest(self.registry), CONTENT_TYPE_LATEST


METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


def method_label(method: Any) -> str:
    """The request method as a label: a known one, else ``other`` (a client's made-up methods add no series)."""
    return method if method in METHODS else "other"


class HttpMetrics:
    """Counts and times every HTTP request under its route template; everything else passes through."""

    def __init__(self, inner: Any, routes: list[Any], metrics: Metrics) -> None:
        self.inner = inner
        self.routes = [r for r in routes if isinstance(getattr(r, "path", None), str)]  # plain routes only
        self.metrics = metrics

    def route(self, scope: dict[str, Any]) -> str:
        """The template the router matched (Starlette leaves it in the scope); for a request answered before
        the router saw it (401, 413, 408), the first plain route whose template matches the path."""
        matched = getattr(scope.get("route"), "path", None)
        if isinstance(matched, str):
            return matched
        partial = None
        for route in self.routes:
            match, _ = route.matches(scope)
            if match == Match.FULL:
                return str(route.path)
            if match == Match.PARTIAL and partial is None:  # the path is known, the method is not
                partial = str(route.path)
        return partial or "unmatched"

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.inner(scope, receive, send)
            return
        start = time.perf_counter()
        status = [500]  # a crash before the response starts is what uvicorn answers

        async def watch(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                status[0] = int(message["status"])
            await send(message)

        try:
            await self.inner(scope, receive, watch)
        finally:
            route, method = self.route(scope), method_label(scope.get("method"))
            self.metrics.http_requests.labels(route, method, str(status[0])).inc()
            self.metrics.http_seconds.labels(route, method).observe(time.perf_counter() - start)


def install(app: Any, metrics: Metrics) -> None:
    """The ``GET /metrics`` route (behind the API key when one is set, like ``/v1``)."""
    from fastapi.responses import Response

    async def metrics_route() -> Response:
        """Prometheus text format: requests, questions, durations, token spend, questions running."""
        body, content_type = metrics.exposition()
        return Response(body, media_type=content_type)

    app.add_api_route("/metrics", metrics_route, methods=["GET"], tags=["health"], summary="Prometheus metrics")
