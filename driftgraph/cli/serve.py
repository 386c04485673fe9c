"""`driftgraph serve` (HTTP API, OpenAI-compatible endpoint, optional MCP at /mcp) and `driftgraph mcp` (stdio)."""

from __future__ import annotations

import errno
import logging
import socket
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
    """Serve the index over HTTP: /v1/query/{mode}, /v1/retrievals, /v1/documents, /v1/jobs,
    /v1/chat/completions, /metrics, /docs. Keys: DRIFTGRAPH_API_KEY (every scope) and DRIFTGRAPH_API_KEYS_FILE
    (lines 'KEY read|write|admin'); without a key the server binds loopback only and is read-only."""
    _need_serve_extra()
    import uvicorn

    from driftgraph.serve import create_app
    from driftgraph.serve.auth import check_exposure, load_keys
    from driftgraph.serve.protocol import with_header_deadline

    cfg = load()
    updates = {k: v for k, v in (("host", host), ("port", port)) if v is not None}
    if updates:
        cfg = cfg.model_copy(update={"serve": cfg.serve.model_validate({**cfg.serve.model_dump(), **updates})})
    keys = load_keys()  # DRIFTGRAPH_API_KEY (every scope) and DRIFTGRAPH_API_KEYS_FILE (scoped); never printed
    check_exposure(cfg.serve.host, "configured" if keys else None)
    sock = _listen(cfg.serve.host, cfg.serve.port)  # before the engine opens: a busy port fails at once
    from driftgraph.api import open_engine

    _server_log()
    asgi = create_app(open_engine(cfg), keys=keys, mcp=mcp)
    bound = int(sock.getsockname()[1])  # --port 0 picked one
    url = _url(cfg.serve.host, bound)

    grace = cfg.serve.shutdown_grace_s

    class Server(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            if self.started:  # uvicorn names the address only when it binds the socket itself
                logging.getLogger("driftgraph.serve").info("serving on %s (OpenAPI at %s/docs)", url, url)

        def handle_exit(self, sig: int, frame: object) -> None:
            # the grace counts from the signal: uvicorn's wait for open requests and the app's drain share it
            asgi.runner.begin_shutdown(grace)
            super().handle_exit(sig, frame)  # type: ignore[arg-type]

    server = Server(
        uvicorn.Config(
            asgi,
            host=cfg.serve.host,
            port=bound,
            log_level="info",
            timeout_graceful_shutdown=max(1, round(grace)),
            lifespan="on",
            timeout_keep_alive=30,  # uvicorn's 5 s races clients that reuse an idle connection (resets)
            http=with_header_deadline(cfg.serve.header_timeout_s),
        )
    )
    server.run(sockets=[sock])
    if not server.started:
        fail(f"could not serve on {cfg.serve.host}:{bound} (see the log above)")


def _url(host: str, port: int) -> str:
    shown = f"[{host.strip('[]')}]" if ":" in host else host
    return f"http://{shown}:{port}"


def _listen(host: str, port: int) -> socket.socket:
    """The server's socket, bound here so that a port in use or an address this machine does not have is one
    line naming the setting (uvicorn would print its own error after starting the app, and exit 3)."""
    try:
        found = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM)
    except socket.gaierror as err:
        fail(f"cannot serve on serve.host={host}: {err.strerror or err} (an address or name of this machine)")
    # a name with both families (``localhost`` -> ::1 and 127.0.0.1 on some systems) binds its IPv4 address,
    # the one clients reach for when they are told 127.0.0.1
    family, kind, proto, _, address = min(found, key=lambda a: a[0] != socket.AF_INET)
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a restart does not wait out TIME_WAIT
    try:
        sock.bind(address)
    except OSError as err:
        sock.close()
        hint = (
            "stop what holds it, or pick another with --port (0 picks a free one)"
            if err.errno == errno.EADDRINUSE
            else "check serve.host and serve.port"
        )
        fail(f"cannot listen on {host}:{port}: {err.strerror or err}; {hint}")
    sock.set_inheritable(True)
    return sock


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
    """Serve MCP over stdio (for agents that start driftgraph themselves; see docs/guides/serving.md)."""
    _need_serve_extra()
    from driftgraph.serve.mcp_server import build_mcp
    from driftgraph.serve.runner import Runner

    eng = engine()
    try:
        build_mcp(eng, Runner(eng.config.serve)).run("stdio")
    finally:
        eng.close()
