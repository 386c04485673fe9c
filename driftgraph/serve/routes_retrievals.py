"""Stored retrievals: ``/v1/retrievals`` (JSON list), ``/v1/retrievals/{id}`` (the trace),
``/v1/retrievals/{id}/cypher`` (text for Neo4j Browser), and the pages people open: ``/retrievals`` (a list
with links) and ``/retrievals/{id}`` (the self-contained page of ``driftgraph trace html``). Unknown id: 404.
They run on the runner's page pool (``serve.max_page_concurrency``): never on a question's slot, never
starving ``/readyz``.
"""

from __future__ import annotations

import html
from typing import Any
from urllib.parse import quote

from fastapi import APIRouter, Query, Request
from fastapi.responses import HTMLResponse, PlainTextResponse, Response

from driftgraph.serve.routes_query import json_response
from driftgraph.serve.state import get_state

router = APIRouter()


def _limit(request: Request, limit: int) -> int:
    return min(limit, get_state(request).cfg.max_list)


@router.get("/v1/retrievals", tags=["retrievals"])
async def list_retrievals(
    request: Request, limit: int = Query(20, ge=1, description="How many, newest first.")
) -> Response:
    """The most recent retrievals, newest first (at most ``serve.max_list``)."""
    engine = get_state(request).engine
    rows = await get_state(request).runner.page(engine.retrievals, _limit(request, limit))
    return json_response({"retrievals": rows})


@router.get("/v1/retrievals/{retrieval_id}", tags=["retrievals"])
async def get_retrieval(retrieval_id: str, request: Request) -> Response:
    """One stored retrieval: its properties (params, cost, trace) and its INCLUDED / DROPPED edges."""
    engine = get_state(request).engine
    return json_response(await get_state(request).runner.page(engine.retrieval, retrieval_id))


@router.get("/v1/retrievals/{retrieval_id}/cypher", tags=["retrievals"], response_class=PlainTextResponse)
async def get_cypher(retrieval_id: str, request: Request) -> PlainTextResponse:
    """The Cypher that draws this retrieval in Neo4j Browser."""
    engine = get_state(request).engine
    return PlainTextResponse(await get_state(request).runner.page(engine.retrieval_cypher, retrieval_id))


@router.get("/retrievals", tags=["pages"], response_class=HTMLResponse)
async def retrievals_page(request: Request, limit: int = Query(50, ge=1)) -> HTMLResponse:
    """A plain HTML list of recent retrievals, each linking to its page."""
    engine = get_state(request).engine
    rows = await get_state(request).runner.page(engine.retrievals, _limit(request, limit))
    return HTMLResponse(render_list(rows))


@router.get("/retrievals/{retrieval_id}", tags=["pages"], response_class=HTMLResponse)
async def retrieval_page(retrieval_id: str, request: Request) -> HTMLResponse:
    """The retrieval page: budget, route, entry verdicts, items, the subgraph as SVG, the cost ledger."""
    engine = get_state(request).engine

    def render() -> str:
        from driftgraph.view import fetch_subgraph, render_page

        data = engine.retrieval(retrieval_id)
        return render_page(data, fetch_subgraph(engine.store, retrieval_id))

    return HTMLResponse(await get_state(request).runner.page(render))


def render_list(rows: list[dict[str, Any]]) -> str:
    """Self-contained: inline CSS, nothing fetched; every database string escaped."""
    lines = []
    for r in rows:
        rid = html.escape(str(r.get("id", "")))
        href = html.escape(quote(str(r.get("id", "")), safe=""))
        created = html.escape(str(r.get("created_at", ""))[:19])
        mode = html.escape(str(r.get("mode", "")))
        query = html.escape(str(r.get("query", ""))[:160])
        lines.append(
            f'<tr><td><a href="/retrievals/{href}">{rid}</a></td><td>{created}</td><td>{mode}</td><td>{query}</td></tr>'
        )
    body = "\n".join(lines) or '<tr><td colspan="4">no retrievals stored yet</td></tr>'
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>driftgraph retrievals</title><style>"
        "body{font:14px system-ui,sans-serif;margin:2em}table{border-collapse:collapse}"
        "td,th{padding:4px 10px;border-bottom:1px solid #ddd;text-align:left}</style></head><body>"
        "<h1>Retrievals</h1><table><tr><th>id</th><th>created</th><th>mode</th><th>question</th></tr>"
        f"{body}</table></body></html>"
    )
