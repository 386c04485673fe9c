"""One retry policy for every remote call: backoff on 429, 5xx, timeouts and dropped connections."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from driftgraph.config import LLMConfig

T = TypeVar("T")


def _retryable(err: Exception) -> bool:
    import openai

    if isinstance(err, openai.APIStatusError):
        return err.status_code == 429 or err.status_code >= 500
    return isinstance(err, openai.APITimeoutError | openai.APIConnectionError)


def with_retries(call: Callable[[], T], cfg: LLMConfig, sleep: Callable[[float], None] = time.sleep) -> T:
    attempt = 0
    while True:
        try:
            return call()
        except Exception as err:
            if attempt >= cfg.max_retries or not _retryable(err):
                raise
            sleep(min(60.0, cfg.backoff_base_s * (2**attempt)))
            attempt += 1
