"""What an OpenAI-compatible server turned out not to support, learnt once per process and endpoint.

Local servers differ from OpenAI in small ways that matter here: some builds of llama.cpp's server answer
400 to ``response_format: json_schema`` (they know ``json_object``), llama-cpp-python's server answers it
with a **500** whose body is a validation error naming ``response_format``, some embedding servers refuse
the ``dimensions`` parameter, and streams may end without a usage chunk. A refusal is recognised by what
the server says, whatever its status (400, 422 or 500), learnt the first time it happens and kept for the
endpoint and model, so later calls (every chat client is per question) send the weaker form at once
instead of paying a refusal each time. Structured output degrades json_schema -> json_object with the
schema (llama-cpp-python turns that schema into a grammar, so the shape is still enforced) -> bare
json_object -> plain text; the prompts describe their JSON shape and replies are read tolerantly
(``jsonreply.py``), so each step still works, with fewer guarantees.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Any

from driftgraph.config import LLMConfig

log = logging.getLogger(__name__)

FORMATS = ("json_schema", "json_object_schema", "json_object", "text")
REFUSAL_STATUSES = (400, 422, 500)
_FORMAT_WORDS = ("response_format", "json_schema", "json_object", "grammar", "schema")
_DIMENSION_WORDS = ("dimensions", "matryoshka")


@dataclass
class ServerNotes:
    """One endpoint + model: the strongest structured-output form it accepted, whether it takes ``dimensions``."""

    structured: str = "json_schema"
    dimensions: bool = True


_NOTES: dict[tuple[str, str, str], ServerNotes] = {}
_LOCK = threading.Lock()


def notes_for(cfg: LLMConfig, model: str | None = None) -> ServerNotes:
    """The notes of ``cfg``'s endpoint for ``model`` (the chat model unless an embeddings model is named)."""
    key = (cfg.api_type, cfg.base_url or "https://api.openai.com/v1", model or cfg.model)
    with _LOCK:
        return _NOTES.setdefault(key, ServerNotes())


def forget_all() -> None:
    """Drop everything learnt (a test starting a new fake server on a reused port)."""
    with _LOCK:
        _NOTES.clear()


def response_format(form: str, json_schema: dict[str, Any]) -> dict[str, Any] | None:
    if form == "json_schema":
        return {"type": "json_schema", "json_schema": json_schema}
    if form == "json_object_schema":
        return {"type": "json_object", "schema": json_schema.get("schema", {})}
    if form == "json_object":
        return {"type": "json_object"}
    return None


def weaker(form: str) -> str | None:
    i = FORMATS.index(form)
    return FORMATS[i + 1] if i + 1 < len(FORMATS) else None


def _refusal_text(err: BaseException) -> str | None:
    """The server's message when ``err`` is a 400, 422 or 500 that may refuse the request's shape, else None."""
    import openai

    if not isinstance(err, openai.APIStatusError) or err.status_code not in REFUSAL_STATUSES:
        return None
    body = err.body
    inner = body.get("error", body) if isinstance(body, dict) else None
    message = inner.get("message") if isinstance(inner, dict) else None
    return f"{message or ''} {err}".casefold()


def refuses_format(err: BaseException) -> bool:
    """A 400, 422 or 500 whose message names the response format, its schema or a grammar (not a too-long
    prompt or a bad parameter): the server will refuse this form every time, so it is not retried."""
    text = _refusal_text(err)
    return text is not None and any(w in text for w in _FORMAT_WORDS)


_VALIDATION_WORDS = ("validation error", "input should be", "field required", "extra inputs are not permitted")


def rejects_request(err: BaseException) -> bool:
    """A refusal the server repeats however often it is asked: a format refusal, or a 500 that is really a
    validation error of the request body (llama-cpp-python wraps pydantic's errors in a 500)."""
    text = _refusal_text(err)
    return text is not None and (refuses_format(err) or any(w in text for w in _VALIDATION_WORDS))


def refuses_dimensions(err: BaseException) -> bool:
    text = _refusal_text(err)
    return text is not None and any(w in text for w in _DIMENSION_WORDS)


def downgrade(notes: ServerNotes, refused: str, endpoint: str) -> str | None:
    """Record that ``refused`` was refused; returns the form to send now (another thread may have gone
    further already). Logged once per endpoint, when the form actually changes."""
    with _LOCK:
        if FORMATS.index(notes.structured) <= FORMATS.index(refused):
            nxt = weaker(refused)
            if nxt is None:
                return None
            notes.structured = nxt
            log.warning("%s refused response_format %s: sending %s from now on", endpoint, refused, nxt)
        return notes.structured


def refuse_dimensions(notes: ServerNotes, endpoint: str) -> None:
    with _LOCK:
        if notes.dimensions:
            notes.dimensions = False
            log.warning("%s refused the embeddings 'dimensions' parameter: not sending it from now on", endpoint)
