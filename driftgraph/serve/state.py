"""What every route shares: the one Engine, the runner that bounds its calls, the serve settings, the metrics."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from fastapi import Request

from driftgraph import QueryRequest, SearchResult
from driftgraph.api import Engine
from driftgraph.config import ServeConfig
from driftgraph.serve.metrics import Metrics
from driftgraph.serve.runner import Runner


@dataclass
class ServeState:
    engine: Engine
    runner: Runner
    cfg: ServeConfig
    metrics: Metrics | None = None

    def query(
        self, request: QueryRequest, interface: str, on_token: Callable[[str], None] | None = None
    ) -> SearchResult:
        """The engine call every interface makes (on a worker thread), counted when ``serve.metrics`` is on."""
        if self.metrics is not None:
            return self.metrics.query(self.engine, request, interface, on_token)
        return self.engine.query(request, on_token=on_token)


def get_state(request: Request) -> ServeState:
    state: ServeState = request.app.state.driftgraph
    return state
