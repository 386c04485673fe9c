"""One error shape for every route, ``{"error": {"message", "type", "code"}}``, and the map from driftgraph's
exceptions to HTTP statuses, so a client reads the same fields whatever went wrong.

400 names the bad field (``code`` is the field), 401 auth, 404 unknown id or route, 413 body too large,
415 a body not declared JSON, 421 a ``Host`` the server does not serve (``guard``), 422 a request above a
server cap (``limits``, ``code`` the field), 429 busy (Retry-After), 502 the upstream LLM failed (``code`` is
its status) or its model gave no usable answer (type ``bad_answer``, ``code`` the problem: ``empty``,
``citations_only``, ``repeated``, ``truncated`` or global search's ``map_failed`` / ``rate_failed``; the
retrieval is stored and named in the message), 503 Neo4j down, 504 too slow.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from driftgraph.errors import (
    AnswerFailed,
    DocumentNotFound,
    DriftgraphError,
    InputError,
    LLMError,
    NoReportsError,
    QuestionStopped,
    RequestError,
    RetrievalNotFound,
    StoreError,
)


class ApiError(Exception):
    """An HTTP answer other than 200, raised inside a route and rendered by ``error_response``."""

    def __init__(
        self,
        status: int,
        message: str,
        type_: str,
        code: str | int | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type_
        self.code = code
        self.headers = headers or {}


def error_body(message: str, type_: str, code: str | int | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": type_, "code": code}}


def error_response(err: ApiError) -> JSONResponse:
    return JSONResponse(error_body(err.message, err.type, err.code), status_code=err.status, headers=err.headers)


def from_exception(err: BaseException) -> ApiError:
    """The HTTP answer for an exception raised by the engine (anything unknown is a 500 without internals)."""
    if isinstance(err, ApiError):
        return err
    if isinstance(err, RequestError):
        return ApiError(400, str(err), "invalid_request_error", err.field)
    if isinstance(err, RetrievalNotFound):
        return ApiError(404, str(err), "not_found", "retrieval_id")
    if isinstance(err, DocumentNotFound):
        return ApiError(404, str(err), "not_found", "document_id")
    if isinstance(err, InputError):  # a document the server cannot take (empty, unreadable, refused format)
        return ApiError(400, str(err), "invalid_request_error", "document")
    if isinstance(err, QuestionStopped):  # its deadline passed (504) or the server is stopping (503)
        if err.reason == "deadline":
            return ApiError(504, str(err), "timeout", "timeout")
        return ApiError(503, str(err), "cancelled", "cancelled")
    if isinstance(err, AnswerFailed):  # the endpoint answered, its model's reply was no answer (issue 37)
        return ApiError(502, str(err), "bad_answer", err.problem)
    if isinstance(err, LLMError):
        status = getattr(err, "status", None)
        return ApiError(502, str(err), "upstream_llm_error", status if status is not None else "llm")
    upstream = _openai_failure(err)
    if upstream is not None:
        return upstream
    if isinstance(err, StoreError) or _driver_failure(err):
        message = str(err) if isinstance(err, StoreError) else f"Neo4j failed ({type(err).__name__}): {err}"[:500]
        return ApiError(503, message, "store_unavailable", "neo4j")
    if isinstance(err, NoReportsError):
        return ApiError(409, str(err), "no_reports", "index")
    if isinstance(err, DriftgraphError):
        return ApiError(500, str(err), "driftgraph_error", type(err).__name__)
    return ApiError(500, f"internal error ({type(err).__name__})", "internal_error", None)


def _openai_failure(err: BaseException) -> ApiError | None:
    """An openai client error that reached us unwrapped: still the upstream's fault, with its status."""
    import openai

    if isinstance(err, openai.APIStatusError):
        return ApiError(
            502, f"the LLM endpoint answered {err.status_code}: {err.message}", "upstream_llm_error", err.status_code
        )
    if isinstance(err, openai.APITimeoutError):
        return ApiError(502, "the LLM endpoint did not answer in time", "upstream_llm_error", "timeout")
    if isinstance(err, openai.APIConnectionError):
        return ApiError(502, "cannot reach the LLM endpoint", "upstream_llm_error", "connection")
    return None


def _driver_failure(err: BaseException) -> bool:
    """A Neo4j driver error the store did not wrap (e.g. a transaction lost to a deadlock): the database's
    side, transient, so 503 like Neo4j being down rather than a 500."""
    try:
        from neo4j.exceptions import DriverError, Neo4jError
    except ImportError:  # pragma: no cover - the driver is a dependency
        return False
    return isinstance(err, DriverError | Neo4jError)


def validation_error(errors: list[Any], prefix: tuple[str, ...] = ("body", "query", "path", "header")) -> ApiError:
    """Pydantic's first complaint as a 400 whose ``code`` is the dotted field path (``budget``, ``history.0.role``)."""
    first = errors[0] if errors else {"loc": (), "msg": "invalid request"}
    loc = [str(p) for p in first.get("loc", ())]
    if loc[:1] and loc[0] in prefix:  # where FastAPI found it: body, query, path
        loc = loc[1:]
    field = ".".join(loc) or None
    msg = str(first.get("msg", "invalid")).removeprefix("Value error, ")
    if first.get("type") == "extra_forbidden":
        msg = "unknown field"
    if first.get("type") == "json_invalid":
        return ApiError(400, f"the body is not valid JSON: {msg}", "invalid_request_error", "body")
    return ApiError(400, f"bad '{field}': {msg}" if field else msg, "invalid_request_error", field)


def install(app: FastAPI) -> None:
    """Route every failure through the one error shape."""

    async def on_api(_: Request, exc: Exception) -> JSONResponse:
        return error_response(from_exception(exc))

    async def on_validation(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        return error_response(validation_error(list(exc.errors())))

    async def on_http(_: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        kind = {404: "not_found", 405: "method_not_allowed", 401: "authentication_error"}.get(exc.status_code, "http")
        return error_response(ApiError(exc.status_code, str(exc.detail), kind, exc.status_code))

    app.add_exception_handler(ApiError, on_api)
    app.add_exception_handler(DriftgraphError, on_api)
    app.add_exception_handler(RequestValidationError, on_validation)
    app.add_exception_handler(StarletteHTTPException, on_http)
    # known outside failures get their status without a logged traceback (the catch-all below logs one)
    import openai
    from neo4j.exceptions import DriverError, Neo4jError

    for known in (DriverError, Neo4jError, openai.APIError):
        app.add_exception_handler(known, on_api)
    app.add_exception_handler(Exception, on_api)
