"""What every route shares: the one Engine, the runner that bounds its calls, the serve settings."""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import Request

from driftgraph.api import Engine
from driftgraph.config import ServeConfig
from driftgraph.serve.runner import Runner


@dataclass
class ServeState:
    engine: Engine
    runner: Runner
    cfg: ServeConfig


def get_state(request: Request) -> ServeState:
    state: ServeState = request.app.state.driftgraph
    return state
