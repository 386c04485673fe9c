"""One retry policy for every remote call: backoff on 429, 5xx, timeouts and dropped connections.

A 429 or 503 with a ``Retry-After`` header waits what the server asked (capped at 60 s), as is; everything
else waits a "full jitter" draw, uniform in ``[0, min(60, backoff_base_s * 2**attempt)]``, so that clients
failed by the same outage do not all come back at the same instant. ``on_attempt`` is told of every HTTP
attempt (the cost ledger counts them apart from logical calls), ``on_retry`` before each retry with the error
that caused it. The policy serves the chat and embedding clients (``llm.*``) and the rerank endpoint
(``*.rerank.*``, urllib errors), each with its own ``max_retries`` and ``backoff_base_s``.
"""

from __future__ import annotations

import random
import time
import urllib.error
from collections.abc import Callable
from typing import Protocol, TypeVar

T = TypeVar("T")
MAX_WAIT_S = 60.0

# Jitter is the one random draw not taken from a seeded generator: its purpose is that clients do NOT
# draw the same waits. Answers never depend on it; tests pass their own ``random.Random(seed)`` as ``rng``.
SYSTEM_JITTER = random.SystemRandom()


class RetryPolicy(Protocol):
    """The two settings ``with_retries`` reads (``LLMConfig``, ``RerankConfig``)."""

    @property
    def max_retries(self) -> int: ...

    @property
    def backoff_base_s(self) -> float: ...


class StreamCut(Exception):
    """A streamed reply ended before its last chunk (no finish reason, no usage): retried like a reset."""


def retryable(err: BaseException) -> bool:
    """429, 5xx (not 501: a feature the server lacks), timeouts, refused or dropped connections, a cut stream,
    an unreadable body."""
    import openai

    if isinstance(err, openai.APIStatusError):
        return _retryable_status(err.status_code)
    if isinstance(err, urllib.error.HTTPError):  # the rerank endpoint (urllib); before URLError, its base
        return _retryable_status(err.code)
    if isinstance(err, openai.APIResponseValidationError | ValueError):  # malformed / truncated JSON body
        return True
    if isinstance(err, openai.APITimeoutError | openai.APIConnectionError | StreamCut | ConnectionError):
        return True
    if isinstance(err, urllib.error.URLError | TimeoutError):  # urllib: refused, unresolvable, timed out
        return True
    return _transport_error(err)


def _retryable_status(code: int) -> bool:
    return code in (408, 409, 429) or (code >= 500 and code != 501)


def _transport_error(err: BaseException) -> bool:
    """httpx's transport errors (a stream dropped mid-way is raised by httpx, not wrapped by the SDK); the SDK
    may ship httpx under another module name, so match by class name and package, not by import."""
    return any(
        cls.__name__ in ("TransportError", "RemoteProtocolError", "ReadError", "ReadTimeout")
        and cls.__module__.split(".")[0].startswith(("httpx", "httpcore"))
        for cls in type(err).__mro__
    )


def retry_after(err: BaseException) -> float | None:
    """Seconds from a ``Retry-After`` (or ``retry-after-ms``) header, if the server sent one (an openai error
    carries them on its ``response``, urllib's ``HTTPError`` on itself)."""
    response = getattr(err, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None and isinstance(err, urllib.error.HTTPError):
        headers = err.headers
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


def backoff_wait(attempt: int, base_s: float, asked: float | None = None, rng: random.Random = SYSTEM_JITTER) -> float:
    """Seconds to wait before retry ``attempt`` (0 first): the server's ``asked`` as is (capped), else full
    jitter, a uniform draw below the capped exponential ceiling (``rng`` is only drawn from then)."""
    if asked is not None:
        return min(MAX_WAIT_S, max(0.0, asked))
    ceiling = min(MAX_WAIT_S, max(0.0, base_s) * 2.0**attempt)
    return rng.uniform(0.0, ceiling) if ceiling > 0 else 0.0


def with_retries(
    call: Callable[[], T],
    cfg: RetryPolicy,
    sleep: Callable[[float], None] = time.sleep,
    *,
    on_attempt: Callable[[], None] | None = None,
    on_retry: Callable[[BaseException], None] | None = None,
    deterministic: Callable[[BaseException], bool] | None = None,
    rng: random.Random = SYSTEM_JITTER,
) -> T:
    """``call`` until it succeeds, fails for good, or has been retried ``cfg.max_retries`` times.

    ``deterministic`` names errors the server will repeat however often it is asked (a 500 that refuses the
    response format): those leave at once, whatever their status. ``rng`` draws the jitter: the default is
    the process's ``SystemRandom`` (clients must not synchronise); tests pass a seeded ``random.Random``."""
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
            sleep(backoff_wait(attempt, cfg.backoff_base_s, retry_after(err), rng))
            attempt += 1
