"""The app factory: one Engine, one Runner, the routes, the error shape, auth, limits, metrics, MCP at /mcp.

``create_app`` is what ``driftgraph serve`` runs under uvicorn and what tests or users can mount elsewhere.
Startup opens Neo4j and the embedder once (so concurrent first requests do not race to load them);
shutdown gets ``serve.shutdown_grace_s`` in total from the signal (``Runner.begin_shutdown``): questions still
running near its end are cancelled and their traces stored, then the engine closes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

from fastapi import FastAPI

from driftgraph import __version__
from driftgraph.api import Engine
from driftgraph.errors import ConfigError
from driftgraph.serve import errors
from driftgraph.serve.auth import ApiKey
from driftgraph.serve.guard import Guard, mcp_security, served_hosts
from driftgraph.serve.jobs import Jobs
from driftgraph.serve.metrics import HttpMetrics, Metrics
from driftgraph.serve.metrics import install as install_metrics
from driftgraph.serve.request_id import RequestId
from driftgraph.serve.retention import prune_forever
from driftgraph.serve.runner import Runner
from driftgraph.serve.state import ServeState

log = logging.getLogger("driftgraph.serve")


def create_app(
    engine: Engine,
    *,
    api_key: str | None = None,
    keys: list[ApiKey] | None = None,
    mcp: bool = False,
    warm: bool = True,
    jobs: bool = True,
) -> Any:
    """The ASGI app for ``engine`` under its config's ``serve`` section. ``api_key``: keys with every scope
    (``DRIFTGRAPH_API_KEY``'s value); ``keys``: scoped keys (serve/auth.py ``load_keys``); ``jobs``: run document
    jobs from ``serve.jobs_dir``."""
    cfg = engine.config.serve
    runner = Runner(cfg)
    metrics = Metrics(runner, cfg) if cfg.metrics else None
    queue = Jobs(engine, cfg.jobs_dir, cfg.jobs_keep_days) if jobs else None
    state = ServeState(engine=engine, runner=runner, cfg=cfg, metrics=metrics, jobs=queue)
    mcp_server = None
    if mcp:
        from driftgraph.serve.mcp_server import build_mcp

        mcp_server = build_mcp(engine, runner, ask=lambda request: state.ask(request, "mcp"), jobs=queue)

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        if warm:
            await asyncio.to_thread(_warm, engine)
        if queue is not None:
            try:
                await asyncio.to_thread(queue.start)  # resumes jobs an earlier run left queued or running
            except ConfigError as err:  # questions can still be answered; document changes answer 503
                log.warning("document jobs are off: %s", err)
                state.jobs = None
        async with contextlib.AsyncExitStack() as stack:
            if mcp_server is not None:
                await stack.enter_async_context(mcp_server.session_manager.run())
            pruning = None
            if cfg.trace_retention_days > 0:
                pruning = asyncio.create_task(prune_forever(engine, cfg, metrics))
            try:
                yield
            finally:
                if pruning is not None:
                    pruning.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await pruning
                if runner.running:
                    log.warning("waiting up to %gs for %d running questions", cfg.shutdown_grace_s, runner.running)
                if not await asyncio.to_thread(runner.drain, cfg.shutdown_grace_s):
                    log.warning("questions still running after serve.shutdown_grace_s; their traces may be lost")
                if queue is not None and not await asyncio.to_thread(queue.stop, cfg.shutdown_grace_s):
                    log.warning("a document job was still running at shutdown; the next start resumes it")
        engine.close()

    app = FastAPI(
        title="driftgraph",
        version=__version__,
        description="GraphRAG on Neo4j: query modes, stored retrieval traces, an OpenAI-compatible endpoint.",
        lifespan=lifespan,
    )
    app.state.driftgraph = state
    errors.install(app)
    from driftgraph.serve import openai_compat, routes_documents, routes_query, routes_retrievals

    routers = (routes_query.router, routes_retrievals.router, routes_documents.router, openai_compat.router)
    for router in routers:
        app.include_router(router)
    if metrics is not None:
        install_metrics(app, metrics)
    if mcp_server is not None:
        mcp_app = mcp_server.streamable_http_app(
            streamable_http_path="/mcp", host=cfg.host, transport_security=mcp_security(cfg)
        )
        app.router.routes.extend(mcp_app.routes)
    if cfg.cors_origins:
        from fastapi.middleware.cors import CORSMiddleware

        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(cfg.cors_origins),
            allow_methods=["GET", "POST", "PUT", "DELETE"],
            allow_headers=["Authorization", "Content-Type", "Mcp-Session-Id", "Mcp-Protocol-Version"],
            expose_headers=["Mcp-Session-Id"],
        )
    guarded = Guard(
        app,
        api_key=api_key,
        scoped=keys,
        database=engine.config.neo4j.database,
        max_upload_bytes=cfg.max_upload_bytes,
        max_body_bytes=cfg.max_body_bytes,
        body_timeout_s=cfg.body_timeout_s,
        hosts=served_hosts(cfg.host, cfg.allowed_hosts),
    )
    if metrics is None:
        outer = RequestId(guarded)
    else:
        # FastAPI wraps an included router in one route without a template: the routers' own routes have them
        routes = [*(r for router in routers for r in router.routes), *app.router.routes]
        outer = RequestId(HttpMetrics(guarded, routes, metrics))
    outer.runner = runner  # type: ignore[attr-defined]  # `driftgraph serve` starts the shutdown clock at SIGTERM
    return outer


def _warm(engine: Engine) -> None:
    """Open the driver and load the embedder before the first request (a failure here is logged, not fatal:
    /readyz reports it and requests answer 503 until Neo4j is back)."""
    try:
        engine.store.read("admin/version")
    except Exception as err:
        log.warning("Neo4j not reachable at start: %s", err)
    try:
        engine.embed(["warm up"])
    except Exception as err:
        log.warning("embedder not ready at start: %s", err)
