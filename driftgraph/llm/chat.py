"""Chat completions through the openai SDK, with retries, a cost ledger and an optional disk cache."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from driftgraph.config import LLMConfig
from driftgraph.llm.client import make_openai_client
from driftgraph.llm.failures import explain
from driftgraph.llm.ledger import Ledger
from driftgraph.llm.retry import StreamCut, with_retries

if TYPE_CHECKING:
    from driftgraph.llm.cache import CallCache


DOWN_AFTER = 3


@dataclass(frozen=True)
class ChatResult:
    text: str
    prompt_tokens: int
    completion_tokens: int
    cached: bool = False
    cache_key: str | None = None


class ChatClient:
    def __init__(self, cfg: LLMConfig, ledger: Ledger, cache: CallCache | None = None) -> None:
        self._cfg = cfg
        self._client = make_openai_client(cfg)
        self.ledger = ledger
        self._cache = cache
        self.successes = 0  # logical calls answered by the endpoint (cache hits excluded)
        self.failures_in_a_row = 0  # logical calls that failed after their retries since the last success

    @property
    def model(self) -> str:
        return self._cfg.model

    def complete(
        self,
        messages: list[dict[str, str]],
        *,
        phase: str,
        max_tokens: int,
        json_schema: dict[str, Any] | None = None,
        on_token: Callable[[str], None] | None = None,
    ) -> ChatResult:
        """One chat call. ``json_schema`` asks for structured output where the config allows it."""
        params: dict[str, Any] = {
            "model": self._cfg.model,
            "messages": messages,
            "temperature": self._cfg.temperature,
            "max_tokens": max_tokens,
        }
        if json_schema is not None and self._cfg.json_schema:
            params["response_format"] = {"type": "json_schema", "json_schema": json_schema}
        key = None
        if self._cache is not None:
            key = self._cache.key(params)
            hit = self._cache.get(key)
            if hit is not None:
                self.ledger.record(phase, cache_hits=1)
                return ChatResult(hit["text"], hit["prompt_tokens"], hit["completion_tokens"], True, key)
        result = self._send(params, phase, on_token)
        self.ledger.record(
            phase, llm_calls=1, prompt_tokens=result.prompt_tokens, completion_tokens=result.completion_tokens
        )
        if self._cache is not None and key is not None:
            self._cache.put(
                key,
                {
                    "text": result.text,
                    "prompt_tokens": result.prompt_tokens,
                    "completion_tokens": result.completion_tokens,
                },
            )
            result = ChatResult(result.text, result.prompt_tokens, result.completion_tokens, False, key)
        return result

    def evict(self, result: ChatResult) -> None:
        """Forget a cached answer the caller could not use, so a re-run asks again instead of replaying it."""
        if self._cache is not None and result.cache_key is not None:
            self._cache.delete(result.cache_key)

    def _send(
        self, params: dict[str, Any], phase: str, on_token: Callable[[str], None] | None
    ) -> ChatResult:
        """Every HTTP attempt and retry counted; a failure leaves as one-line ``FatalLLMError``/``LLMUnavailable``."""
        retries = [0]

        def retried(err: BaseException) -> None:
            retries[0] += 1
            self.ledger.record(phase, retries=1)

        call: Callable[[], ChatResult]
        if on_token is not None:
            sink = _Resumable(on_token)
            call = lambda: self._stream(params, sink.restart())  # noqa: E731
        else:
            call = lambda: self._once(params)  # noqa: E731
        try:
            result = with_retries(
                call, self._cfg, on_attempt=lambda: self.ledger.record(phase, http_attempts=1), on_retry=retried
            )
        except Exception as err:
            self.ledger.record(phase, failed_calls=1)
            self.failures_in_a_row += 1
            raise explain(err, self._cfg, retries[0]) from err
        self.successes += 1
        self.failures_in_a_row = 0
        return result

    def endpoint_down(self, after: int = DOWN_AFTER) -> bool:
        """No call ever succeeded and the last ``after`` failed after their retries: the endpoint is not there
        (refused connection, every call timing out), so a long run stops instead of failing every item."""
        return self.successes == 0 and self.failures_in_a_row >= after

    def _once(self, params: dict[str, Any]) -> ChatResult:
        resp = self._client.chat.completions.create(**params)
        text = resp.choices[0].message.content or ""
        usage = resp.usage
        return ChatResult(text, usage.prompt_tokens if usage else 0, usage.completion_tokens if usage else 0)

    def _stream(self, params: dict[str, Any], on_token: Callable[[str], None]) -> ChatResult:
        parts: list[str] = []
        prompt_tokens = completion_tokens = 0
        finished = False
        stream = self._client.chat.completions.create(**params, stream=True, stream_options={"include_usage": True})
        for chunk in stream:
            if chunk.usage is not None:
                prompt_tokens = chunk.usage.prompt_tokens
                completion_tokens = chunk.usage.completion_tokens
                finished = True
            for choice in chunk.choices:
                if choice.delta.content:
                    parts.append(choice.delta.content)
                    on_token(choice.delta.content)
                finished = finished or choice.finish_reason is not None
        if not finished:  # the connection closed before the last chunk: retry, never keep half an answer
            raise StreamCut(f"stream ended after {len(parts)} pieces without a finish reason")
        return ChatResult("".join(parts), prompt_tokens, completion_tokens)


class _Resumable:
    """An ``on_token`` sink that survives a retried stream: text already printed is not printed again.

    A retry re-sends the request and the reply starts over; the first ``printed`` characters are skipped, so
    the user sees each character once (a retry that answers differently continues after the printed part).
    """

    def __init__(self, sink: Callable[[str], None]) -> None:
        self._sink = sink
        self.printed = 0
        self._seen = 0

    def restart(self) -> Callable[[str], None]:
        self._seen = 0
        return self._feed

    def _feed(self, text: str) -> None:
        start, self._seen = self._seen, self._seen + len(text)
        if self._seen <= self.printed:
            return
        new = text[max(0, self.printed - start) :]
        self.printed += len(new)
        self._sink(new)


def schema(name: str, properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    """A strict ``response_format`` json_schema object."""
    return {
        "name": name,
        "strict": True,
        "schema": {
            "type": "object",
            "properties": properties,
            "required": required if required is not None else list(properties),
            "additionalProperties": False,
        },
    }


def dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, sort_keys=True)
