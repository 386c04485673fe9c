"""``POST /v1/query/{local,drift,global,basic}``: the body is the mode's request model plus ``stream``.

The body schemas are the request models themselves (``driftgraph.LocalQuery`` ...), so OpenAPI at ``/docs``
shows the same field descriptions as ``--help``. The answer is ``result.to_dict()``, the envelope the CLI
prints with ``--json``; with ``"stream": true`` it is server-sent events: ``token`` frames, then one
``result`` frame with the envelope (or an ``error`` frame).
"""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response, StreamingResponse
from pydantic import BaseModel, Field

from driftgraph import BasicQuery, DriftQuery, GlobalQuery, LocalQuery, QueryRequest
from driftgraph.serve import encode
from driftgraph.serve.errors import error_body, from_exception
from driftgraph.serve.limits import enforce_caps
from driftgraph.serve.sse import events, frame, token_frame
from driftgraph.serve.state import get_state, request_id

router = APIRouter()
MODES: dict[str, type[QueryRequest]] = {
    "local": LocalQuery,
    "drift": DriftQuery,
    "global": GlobalQuery,
    "basic": BasicQuery,
}
SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


def json_response(data: Any, status: int = 200) -> Response:
    """JSON that parses to what the CLI's ``--json`` prints (``serve/encode.py``)."""
    return Response(encode.dumps(data), status_code=status, media_type="application/json")


def body_model(cls: type[QueryRequest]) -> type[QueryRequest]:
    """The request model plus ``stream`` (HTTP only), named for OpenAPI. It keeps pydantic's own ``__init__``:
    the request's ``__init__`` turns validation errors into ``RequestError``, which pydantic would swallow into
    a field-less error; FastAPI's validation error keeps the field path."""
    namespace: dict[str, Any] = {
        "__module__": __name__,
        "__doc__": cls.__doc__,
        "__annotations__": {"stream": bool},
        "stream": Field(False, description="Answer as server-sent events: tokens, then the envelope."),
        "__init__": BaseModel.__init__,
    }
    metaclass: Any = type(cls)
    model: type[QueryRequest] = metaclass(f"{cls.__name__}Body", (cls,), namespace)
    return model


def to_request(cls: type[QueryRequest], body: QueryRequest) -> QueryRequest:
    return cls.parse(body.model_dump(exclude={"stream"}))


def _add_route(mode: str, cls: type[QueryRequest]) -> None:
    Body = body_model(cls)

    async def query(body: Body, request: Request) -> Response:  # type: ignore[valid-type]
        state, req_id = get_state(request), request_id(request)
        question = to_request(cls, body)
        enforce_caps(question, state.engine.config)  # before a stream starts: a status, not an error event
        if getattr(body, "stream", False):
            gen = events(
                state.stream(question, "http", req_id),
                on_token=token_frame,
                on_result=lambda r: [frame(r.to_dict(), "result")],
                on_error=lambda e: [frame(e, "error")],
            )
            return StreamingResponse(gen, media_type="text/event-stream", headers=SSE_HEADERS)
        result = await state.ask(question, "http", req_id, request.is_disconnected)
        return json_response(result.to_dict())

    query.__annotations__["body"] = Body  # a real class: the local name cannot be resolved from a string
    query.__doc__ = f"{cls.__doc__} Body: `{cls.__name__}` plus `stream`; answer: the `--json` envelope."
    router.add_api_route(
        f"/v1/query/{mode}", query, methods=["POST"], name=f"query_{mode}", summary=f"{mode} search", tags=["query"]
    )


for _mode, _cls in MODES.items():
    _add_route(_mode, _cls)


@router.get("/healthz", tags=["health"])
async def healthz() -> dict[str, str]:
    """The process is up (says nothing about Neo4j)."""
    return {"status": "ok"}


@router.get("/readyz", tags=["health"])
async def readyz(request: Request) -> Response:
    """Neo4j answers and the database was built with the configured embedder; else 503 with the reason."""
    state = get_state(request)

    def check() -> dict[str, Any]:
        state.engine.store.read("admin/version")
        state.engine.check_schema()
        return {"status": "ready", "running": state.runner.running}

    try:  # not through the runner's pools: a busy server is still ready
        return json_response(await asyncio.to_thread(check))
    except Exception as err:
        api = from_exception(err)
        return json_response(error_body(f"not ready: {api.message}", "not_ready", api.code), 503)
