"""`driftgraph serve` (HTTP API, OpenAI-compatible endpoint, optional MCP at /mcp) and `driftgraph mcp` (stdio)."""

from __future__ import annotations

import logging
from typing import Annotated

import typer

from driftgraph.cli import app
from driftgraph.cli.common import engine, fail, load


@app.command()
def serve(
    host: Annotated[str | None, typer.Option("--host", help="Bind address (default serve.host, 127.0.0.1).")] = None,
    port: Annotated[int | None, typer.Option("--port", help="Port (default serve.port, 8765; 0 = any free).")] = None,
    mcp: Annotated[bool, typer.Option("--mcp", help="Also serve MCP (streamable HTTP) at /mcp.")] = False,
) -> None:
    """Serve the index over HTTP: /v1/query/{mode}, /v1/retrievals, /v1/chat/completions, /metrics, /docs."""
    _need_serve_extra()
    import uvicorn

    from driftgraph.serve import create_app
    from driftgraph.serve.auth import api_key_from_env, check_exposure
    from driftgraph.serve.protocol import with_header_deadline

    cfg = load()
    updates = {k: v for k, v in (("host", host), ("port", port)) if v is not None}
    if updates:
        cfg = cfg.model_copy(update={"serve": cfg.serve.model_validate({**cfg.serve.model_dump(), **updates})})
    key = api_key_from_env()
    check_exposure(cfg.serve.host, key)
    from driftgraph.api import open_engine

    _server_log()
    asgi = create_app(open_engine(cfg), api_key=key, mcp=mcp)
    server = uvicorn.Server(
        uvicorn.Config(
            asgi,
            host=cfg.serve.host,
            port=cfg.serve.port,
            log_level="info",
            timeout_graceful_shutdown=max(1, round(cfg.serve.shutdown_grace_s)),
            lifespan="on",
            timeout_keep_alive=30,  # uvicorn's 5 s races clients that reuse an idle connection (resets)
            http=with_header_deadline(cfg.serve.header_timeout_s),
        )
    )
    server.run()
    if not server.started:
        fail(f"could not serve on {cfg.serve.host}:{cfg.serve.port} (see the log above)")


SERVE_EXTRA = ("fastapi", "uvicorn", "mcp", "orjson", "prometheus_client")  # pyproject.toml's serve extra


def _need_serve_extra() -> None:
    """One line naming what to install, not an import traceback, when the serve extra is missing or partial
    (an install from before a dependency joined it). Looks the packages up without importing them: ``serve``
    without ``--mcp`` never imports the mcp SDK."""
    from importlib.util import find_spec

    missing = [name for name in SERVE_EXTRA if find_spec(name) is None]
    if missing:
        fail(f"serving needs the serve extra ({', '.join(missing)} missing): pip install 'driftgraph[serve]'")


class _UvicornStyle(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return f"{record.levelname + ':':<10}{record.getMessage()}"


def _server_log() -> None:
    """uvicorn configures its own loggers only: the server's lines (one per question, start-up and shutdown
    warnings) go to stderr beside uvicorn's."""
    handler = logging.StreamHandler()
    handler.setFormatter(_UvicornStyle())
    logger = logging.getLogger("driftgraph.serve")
    if not logger.handlers:
        logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False


@app.command("mcp")
def mcp_stdio() -> None:
    """Serve MCP over stdio (for agents that start driftgraph themselves; see README "Serving")."""
    _need_serve_extra()
    from driftgraph.serve.mcp_server import build_mcp
    from driftgraph.serve.runner import Runner

    eng = engine()
    try:
        build_mcp(eng, Runner(eng.config.serve)).run("stdio")
    finally:
        eng.close()
