"""Documents and their jobs over HTTP: ``GET /v1/documents`` and ``/v1/documents/{id}`` read; ``POST``, ``PUT``
and ``DELETE`` answer 202 with a job (``Location: /v1/jobs/{id}``) that ``serve/jobs.py`` runs in order;
``GET /v1/jobs/{id}`` follows it and ``DELETE`` cancels it while queued.

A change needs a key with the ``write`` scope (serve/auth.py); without any key the server is read-only and
documents change only from the CLI. A body is JSON (``text``, or ``name`` with ``content_base64``; ``id``,
``title``, ``metadata``) or ``multipart/form-data`` (a ``file`` part; ``id``, ``title`` and ``metadata`` as
JSON text), up to ``serve.max_upload_bytes``.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response

from driftgraph.serve.auth import NO_KEY_SCOPES, STATE_KEY
from driftgraph.serve.errors import ApiError
from driftgraph.serve.jobs import JobError, Jobs
from driftgraph.serve.routes_query import json_response
from driftgraph.serve.state import get_state

router = APIRouter()


def require(request: Request, scope: str) -> None:
    """403 unless the caller's key has ``scope`` (the Guard put the key's scopes in the request's state)."""
    scopes = request.scope.get("state", {}).get(STATE_KEY, NO_KEY_SCOPES)
    if scope not in scopes:
        why = (
            "this server has no API key, so it is read-only: change documents with `driftgraph documents`, or "
            "serve with a key (DRIFTGRAPH_API_KEY or DRIFTGRAPH_API_KEYS_FILE)"
            if scopes is NO_KEY_SCOPES
            else f"this key's scopes ({', '.join(sorted(scopes))}) do not include {scope}"
        )
        raise ApiError(403, why, "permission_error", "scope")


def jobs(request: Request) -> Jobs:
    queue = get_state(request).jobs
    if queue is None:
        raise ApiError(503, "document jobs are not running on this server", "unavailable", "jobs")
    return queue


@router.get("/v1/documents", tags=["documents"])
async def list_documents(request: Request) -> Response:
    """The stored documents: id, title, metadata, size and chunks (no text)."""
    engine = get_state(request).engine
    docs = await get_state(request).runner.page(engine.documents.list)
    return json_response({"documents": [d.to_dict() for d in docs]})


@router.get("/v1/documents/{document_id}", tags=["documents"])
async def get_document(document_id: str, request: Request) -> Response:
    """One stored document with its text; 404 for an unknown id."""
    engine = get_state(request).engine
    doc = await get_state(request).runner.page(engine.documents.get, document_id)
    return json_response(doc.to_dict())


@router.post("/v1/documents", tags=["documents"], status_code=202)
async def add_document(request: Request) -> Response:
    """Add a document (text or an upload); 202 with the job. Text already stored under its id is a no-op."""
    require(request, "write")
    body = await _body(request)
    return _accepted(_submit(request, "add", document_id=body.pop("id", None), **body))


@router.put("/v1/documents/{document_id}", tags=["documents"], status_code=202)
async def replace_document(document_id: str, request: Request) -> Response:
    """Replace a stored document (it keeps its id); 404 for an unknown id, else 202 with the job."""
    require(request, "write")
    body = await _body(request)
    body.pop("id", None)
    await _stored(request, document_id)
    return _accepted(_submit(request, "replace", document_id=document_id, **body))


@router.delete("/v1/documents/{document_id}", tags=["documents"], status_code=202)
async def delete_document(document_id: str, request: Request) -> Response:
    """Delete a stored document and what only it contributed; 404 for an unknown id, else 202 with the job."""
    require(request, "write")
    await _stored(request, document_id)
    return _accepted(_submit(request, "delete", document_id=document_id))


@router.get("/v1/jobs", tags=["documents"])
async def list_jobs(request: Request, limit: int = Query(50, ge=1, le=1000)) -> Response:
    """Recent document jobs, newest first."""
    return json_response({"jobs": [j.public() for j in jobs(request).list(limit)]})


@router.get("/v1/jobs/{job_id}", tags=["documents"])
async def get_job(job_id: str, request: Request) -> Response:
    """A job: state (queued, running, done, failed, cancelled), the change's counts, cost and failures."""
    try:
        return json_response(jobs(request).get(job_id).public())
    except JobError as err:
        raise ApiError(err.status, str(err), "not_found", "job_id") from None


@router.delete("/v1/jobs/{job_id}", tags=["documents"])
async def cancel_job(job_id: str, request: Request) -> Response:
    """Cancel a queued job (409 once it runs: a change is never stopped half way)."""
    require(request, "write")
    try:
        return json_response(jobs(request).cancel(job_id).public())
    except JobError as err:
        raise ApiError(err.status, str(err), "not_found" if err.status == 404 else "conflict", "job_id") from None


def _submit(request: Request, action: str, **fields: Any) -> dict[str, Any]:
    try:
        return jobs(request).submit(action, **fields).public()
    except JobError as err:
        raise ApiError(err.status, str(err), "unavailable", "jobs") from None


def _accepted(job: dict[str, Any]) -> Response:
    response = json_response(job, status=202)
    response.headers["Location"] = f"/v1/jobs/{job['id']}"
    return response


async def _stored(request: Request, document_id: str) -> None:
    engine = get_state(request).engine
    await get_state(request).runner.page(engine.documents.get, document_id)  # DocumentNotFound: 404


async def _body(request: Request) -> dict[str, Any]:
    """``{text | upload, id, title, metadata}`` from a JSON or multipart body; 400 naming the field otherwise."""
    media = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if media == "multipart/form-data":
        form = await request.form()
        part = form.get("file")
        if part is None or isinstance(part, str):
            raise ApiError(400, "a multipart upload needs a 'file' part", "invalid_request_error", "file")
        data = await part.read()
        fields: dict[str, Any] = {k: form.get(k) for k in ("id", "title", "metadata") if isinstance(form.get(k), str)}
        if "metadata" in fields:
            fields["metadata"] = _json_object(fields["metadata"])
        return {**_named(fields), "upload": (part.filename or "upload", data)}
    try:
        raw = json.loads(await request.body())
    except ValueError:
        raise ApiError(400, "the body is not JSON", "invalid_request_error", "body") from None
    if not isinstance(raw, dict):
        raise ApiError(400, "the body must be a JSON object", "invalid_request_error", "body")
    unknown = set(raw) - {"text", "name", "content_base64", "id", "title", "metadata"}
    if unknown:
        raise ApiError(400, f"unknown field {sorted(unknown)[0]!r}", "invalid_request_error", sorted(unknown)[0])
    out = _named({k: raw.get(k) for k in ("id", "title", "metadata") if raw.get(k) is not None})
    if "content_base64" in raw:
        name = raw.get("name")
        if not isinstance(name, str) or not name.strip():
            raise ApiError(
                400,
                "content_base64 needs a 'name' (its extension says how to read it)",
                "invalid_request_error",
                "name",
            )
        try:
            data = base64.b64decode(str(raw["content_base64"]), validate=True)
        except (binascii.Error, ValueError):
            raise ApiError(400, "content_base64 is not base64", "invalid_request_error", "content_base64") from None
        return {**out, "upload": (name, data)}
    text = raw.get("text")
    if not isinstance(text, str) or not text.strip():
        raise ApiError(400, "give 'text', or 'name' and 'content_base64'", "invalid_request_error", "text")
    return {**out, "text": text}


def _named(fields: dict[str, Any]) -> dict[str, Any]:
    for key in ("id", "title"):
        if key in fields and not isinstance(fields[key], str):
            raise ApiError(400, f"'{key}' must be a string", "invalid_request_error", key)
    if "metadata" in fields and not isinstance(fields["metadata"], dict):
        raise ApiError(400, "'metadata' must be an object", "invalid_request_error", "metadata")
    return fields


def _json_object(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        raise ApiError(400, "'metadata' must be a JSON object", "invalid_request_error", "metadata") from None
