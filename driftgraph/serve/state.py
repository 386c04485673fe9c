"""What every route shares: the one Engine, the runner that bounds its calls, the serve settings, the metrics.

``ServeState.query`` is the one engine call every interface makes (HTTP routes, the OpenAI-compatible endpoint,
``/mcp``), on a worker thread: it logs one line per question (mode, interface, outcome, time, context tokens,
spend, retrieval id; never the question's text, which may hold what users would not want in a log) and
reports it to the metrics when ``serve.metrics`` is on.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from fastapi import Request

from driftgraph import QueryRequest, SearchResult
from driftgraph.api import Engine
from driftgraph.config import ServeConfig
from driftgraph.deadline import Deadline
from driftgraph.serve.errors import from_exception
from driftgraph.serve.gate import GraphGate
from driftgraph.serve.jobs import Jobs
from driftgraph.serve.limits import enforce_caps
from driftgraph.serve.metrics import Metrics
from driftgraph.serve.request_id import SCOPE_KEY
from driftgraph.serve.runner import Disconnected, Runner
from driftgraph.serve.sse import TokenStream

log = logging.getLogger("driftgraph.serve")


@dataclass
class ServeState:
    engine: Engine
    runner: Runner
    cfg: ServeConfig
    metrics: Metrics | None = None
    jobs: Jobs | None = None  # document changes (serve/jobs.py); None when the app runs without them
    gate: GraphGate = field(default_factory=GraphGate)  # the jobs' own when there are jobs (__post_init__)

    def __post_init__(self) -> None:
        if self.jobs is not None:  # questions and jobs share one gate: no question reads half a change
            self.gate = self.jobs.gate

    async def ask(
        self,
        request: QueryRequest,
        interface: str,
        request_id: str | None = None,
        disconnected: Disconnected | None = None,
    ) -> SearchResult:
        """One question on the runner under its deadline: 504 at the limit, cancelled when the client goes."""
        deadline = self.runner.deadline(request.timeout_s)
        fut = self.runner.start(self.query, request, interface, None, request_id, deadline, deadline=deadline)
        return await self.runner.wait(fut, deadline, disconnected)

    def stream(self, request: QueryRequest, interface: str, request_id: str | None = None) -> TokenStream:
        """One question whose answer streams; its deadline ends the stream (and the question) at the limit."""
        deadline = self.runner.deadline(request.timeout_s)
        return TokenStream(
            self.runner,
            lambda on_token: self.query(request, interface, on_token, request_id, deadline),
            deadline,
        )

    def query(
        self,
        request: QueryRequest,
        interface: str,
        on_token: Callable[[str], None] | None = None,
        request_id: str | None = None,
        deadline: Deadline | None = None,
    ) -> SearchResult:
        """``engine.query(request)``, logged (with the HTTP request's ``X-Request-Id``) and counted."""
        enforce_caps(request, self.engine.config)  # every interface: a request lowers caps, never raises them
        mode = request.mode
        start = time.perf_counter()
        try:
            with self.gate.reading(deadline):
                result = self.engine.query(request, on_token=on_token, deadline=deadline)
        except Exception as err:
            seconds = time.perf_counter() - start
            kind = from_exception(err).type
            rid = getattr(err, "retrieval_id", None)
            log.warning(
                "question %s via %s failed after %.0f ms: %s (%s)%s%s",
                mode,
                interface,
                seconds * 1000,
                kind,
                type(err).__name__,
                f", retrieval {rid}" if rid else "",
                f", request {request_id}" if request_id else "",
            )
            if self.metrics is not None:
                self.metrics.failed(mode, interface, seconds, kind)
            raise
        seconds = time.perf_counter() - start
        cost = result.cost
        log.info(
            "question %s via %s: %s in %.0f ms, %d context tokens, %d LLM calls, %d+%d tokens, retrieval %s%s",
            mode,
            interface,
            result.stop_reason or "answered",
            seconds * 1000,
            result.context.tokens,
            cost.llm_calls,
            cost.prompt_tokens,
            cost.completion_tokens,
            result.retrieval_id,
            f", request {request_id}" if request_id else "",
        )
        if self.metrics is not None:
            self.metrics.finished(mode, interface, seconds, result)
        return result


def get_state(request: Request) -> ServeState:
    state: ServeState = request.app.state.driftgraph
    return state


def request_id(request: Request) -> str | None:
    """The id ``serve/request_id.py`` gave this HTTP request (None when the app runs without that layer)."""
    value = request.scope.get(SCOPE_KEY)
    return value if isinstance(value, str) else None
