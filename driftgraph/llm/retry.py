"""One retry policy for every remote call: backoff on 429, 5xx, timeouts and dropped connections.

A 429 or 503 with a ``Retry-After`` header waits what the server asked (capped at 60 s); everything else
waits ``backoff_base_s * 2**attempt``. ``on_attempt`` is told of every HTTP attempt (the cost ledger counts
them apart from logical calls), ``on_retry`` before each retry with the error that caused it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from driftgraph.config import LLMConfig

T = TypeVar("T")
MAX_WAIT_S = 60.0


class StreamCut(Exception):
    """A streamed reply ended before its last chunk (no finish reason, no usage): retried like a reset."""


def retryable(err: BaseException) -> bool:
    """429, 5xx (not 501: a feature the server lacks), timeouts, refused or dropped connections, a cut stream,
    an unreadable body."""
    import openai

    if isinstance(err, openai.APIStatusError):
        return err.status_code in (408, 409, 429) or (err.status_code >= 500 and err.status_code != 501)
    if isinstance(err, openai.APIResponseValidationError | ValueError):  # malformed / truncated JSON body
        return True
    if isinstance(err, openai.APITimeoutError | openai.APIConnectionError | StreamCut | ConnectionError):
        return True
    return _transport_error(err)


def _transport_error(err: BaseException) -> bool:
    """httpx's transport errors (a stream dropped mid-way is raised by httpx, not wrapped by the SDK); the SDK
    may ship httpx under another module name, so match by class name and package, not by import."""
    return any(
        cls.__name__ in ("TransportError", "RemoteProtocolError", "ReadError", "ReadTimeout")
        and cls.__module__.split(".")[0].startswith(("httpx", "httpcore"))
        for cls in type(err).__mro__
    )


def retry_after(err: BaseException) -> float | None:
    """Seconds from a ``Retry-After`` (or ``retry-after-ms``) header, if the server sent one."""
    response = getattr(err, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    try:
        if headers.get("retry-after-ms") is not None:
            return float(headers["retry-after-ms"]) / 1000.0
        if headers.get("retry-after") is not None:
            return float(headers["retry-after"])
    except (TypeError, ValueError):
        return None
    return None


def with_retries(
    call: Callable[[], T],
    cfg: LLMConfig,
    sleep: Callable[[float], None] = time.sleep,
    *,
    on_attempt: Callable[[], None] | None = None,
    on_retry: Callable[[BaseException], None] | None = None,
    deterministic: Callable[[BaseException], bool] | None = None,
) -> T:
    """``call`` until it succeeds, fails for good, or has been retried ``cfg.max_retries`` times.

    ``deterministic`` names errors the server will repeat however often it is asked (a 500 that refuses the
    response format): those leave at once, whatever their status."""
    attempt = 0
    while True:
        if on_attempt is not None:
            on_attempt()
        try:
            return call()
        except Exception as err:
            if attempt >= cfg.max_retries or not retryable(err):
                raise
            if deterministic is not None and deterministic(err):
                raise
            if on_retry is not None:
                on_retry(err)
            asked = retry_after(err)
            wait = asked if asked is not None else cfg.backoff_base_s * (2**attempt)
            sleep(min(MAX_WAIT_S, max(0.0, wait)))
            attempt += 1
