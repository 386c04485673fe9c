"""Chat completions through the openai SDK, with retries, a cost ledger and an optional disk cache.

Local servers are met where they are (``compat.py``): a refused ``json_schema`` is re-sent as ``json_object``
with the schema, then bare ``json_object``, then plain text, learnt once per endpoint; a reply or stream
without token counts is counted with tiktoken and the ledger's ``estimated_calls`` says so.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from driftgraph.config import LLMConfig, TokenizerConfig
from driftgraph.deadline import Deadline
from driftgraph.errors import QuestionStopped
from driftgraph.llm import compat
from driftgraph.llm.client import make_openai_client
from driftgraph.llm.failures import endpoint, explain
from driftgraph.llm.ledger import Ledger
from driftgraph.llm.loops import LOOPED, LoopWatch
from driftgraph.llm.retry import StreamCut, with_retries
from driftgraph.llm.tokenizer import count_tokens, prompt_tokens

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
    estimated: bool = False  # the server sent no token counts: ours, by tiktoken
    finish_reason: str | None = None  # "length": cut at max_tokens; LOOPED: cut by the loop guard; None: unknown

    @classmethod
    def from_cache(cls, hit: dict[str, Any], key: str) -> ChatResult:
        """A cached reply replayed as it was received, ``finish_reason`` included: the real client, the estimate's
        dry run and the batch collector all read a cut-off reply the same way (salvaged, not repaired)."""
        return cls(
            hit["text"], hit["prompt_tokens"], hit["completion_tokens"], True, key,
            finish_reason=hit.get("finish_reason"),
        )  # fmt: skip

    @property
    def truncated(self) -> bool:
        """The reply was cut off, at ``max_tokens`` or by the loop guard: whatever it holds is incomplete."""
        return self.finish_reason in ("length", LOOPED)


def request_params(
    llm: LLMConfig, messages: list[dict[str, str]], max_tokens: int, json_schema: dict[str, Any] | None
) -> dict[str, Any]:
    """What a chat call sends and its cache key is made of: one definition, so the dry-run estimate and the
    batch collector key their calls exactly as ``ChatClient.complete`` does."""
    params: dict[str, Any] = {
        "model": llm.model,
        "messages": messages,
        "temperature": llm.temperature,
        "max_tokens": max_tokens,
    }
    if json_schema is not None and llm.json_schema:
        params["response_format"] = {"type": "json_schema", "json_schema": json_schema}
    return params


class ChatClient:
    def __init__(
        self,
        cfg: LLMConfig,
        ledger: Ledger,
        cache: CallCache | None = None,
        encoding: str | None = None,
        deadline: Deadline | None = None,
    ) -> None:
        self._cfg = cfg
        self._deadline = deadline or Deadline()  # a question's: bounds every request and retry wait
        self._client = make_openai_client(cfg)
        self.ledger = ledger
        self._cache = cache
        self._encoding = encoding or TokenizerConfig().encoding
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
        loop_guard: bool = False,
    ) -> ChatResult:
        """One chat call. ``json_schema`` asks for structured output where the config allows it; ``loop_guard``
        streams the reply and cuts it once it repeats itself (``finish_reason`` LOOPED, see ``llm.loops``)."""
        params = request_params(self._cfg, messages, max_tokens, json_schema)
        key = None
        if self._cache is not None:
            key = self._cache.key(params)
            hit = self._cache.get(key)
            if hit is not None:
                self.ledger.record(phase, cache_hits=1)
                return ChatResult.from_cache(hit, key)
        result = self._send(params, phase, on_token, loop_guard)
        if result.finish_reason == LOOPED:
            self.ledger.record(phase, loops_cut=1)
        self.ledger.record(
            phase,
            llm_calls=1,
            prompt_tokens=result.prompt_tokens,
            completion_tokens=result.completion_tokens,
            estimated_calls=int(result.estimated),
        )
        if self._cache is not None and key is not None:
            self._cache.put(
                key,
                {
                    "text": result.text,
                    "prompt_tokens": result.prompt_tokens,
                    "completion_tokens": result.completion_tokens,
                    "finish_reason": result.finish_reason,
                },
            )
            result = ChatResult(
                result.text,
                result.prompt_tokens,
                result.completion_tokens,
                False,
                key,
                result.estimated,
                result.finish_reason,
            )
        return result

    def evict(self, result: ChatResult) -> None:
        """Forget a cached answer the caller could not use, so a re-run asks again instead of replaying it."""
        if self._cache is not None and result.cache_key is not None:
            self._cache.delete(result.cache_key)

    def _send(
        self, params: dict[str, Any], phase: str, on_token: Callable[[str], None] | None, loop_guard: bool = False
    ) -> ChatResult:
        """Every HTTP attempt and retry counted; a failure leaves as one-line ``FatalLLMError``/``LLMUnavailable``.

        ``params`` is the request as the cache knows it; what is sent carries the strongest response format
        this endpoint has not refused, and a refusal is re-sent once in the next weaker form."""
        retries = [0]
        notes = compat.notes_for(self._cfg)
        schema = (params.get("response_format") or {}).get("json_schema")
        sent = self._with_format(params, schema, notes.structured)

        def retried(err: BaseException) -> None:
            retries[0] += 1
            self.ledger.record(phase, retries=1)

        sink = _Resumable(on_token) if on_token is not None else None
        where = f"an LLM call ({phase})"
        while True:
            try:
                result = with_retries(
                    partial(self._deadline.run, self._call(sent, sink, loop_guard), where),
                    self._cfg,
                    sleep=partial(self._deadline.sleep, where=where),
                    on_attempt=lambda: self.ledger.record(phase, http_attempts=1),
                    on_retry=retried,
                    deterministic=compat.rejects_request,
                )
                if sink is not None:
                    sink.finish(result.text)
                break
            except QuestionStopped:
                raise
            except Exception as err:
                if self._deadline.reason is not None:  # a request cut at the question's limit
                    raise self._deadline.stopped(where) from err
                form = self._form_of(sent)
                if schema is not None and form != "text" and compat.refuses_format(err):
                    nxt = compat.downgrade(notes, form, f"{endpoint(self._cfg)} (model {self.model})")
                    if nxt is not None:
                        self.ledger.record(phase, format_fallbacks=1)
                        sent = self._with_format(params, schema, nxt)
                        continue
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

    def _call(self, request: dict[str, Any], sink: _Resumable | None, loop_guard: bool) -> Callable[[], ChatResult]:
        if sink is not None:
            return lambda: self._stream(request, sink.restart(), LoopWatch() if loop_guard else None)
        if loop_guard:
            return lambda: self._stream(request, None, LoopWatch())
        return lambda: self._once(request)

    @staticmethod
    def _with_format(params: dict[str, Any], schema: dict[str, Any] | None, form: str) -> dict[str, Any]:
        if schema is None:
            return params
        sent = {k: v for k, v in params.items() if k != "response_format"}
        fmt = compat.response_format(form, schema)
        return sent if fmt is None else {**sent, "response_format": fmt}

    @staticmethod
    def _form_of(params: dict[str, Any]) -> str:
        return str((params.get("response_format") or {}).get("type") or "text")

    def _counted(
        self,
        params: dict[str, Any],
        text: str,
        prompt: int | None,
        completion: int | None,
        finish_reason: str | None = None,
    ) -> ChatResult:
        """The server's counts, or ours where it sent none (or 0 for a non-empty prompt: Ollama reports 0 for
        a prompt it had cached, which would let a token budget spend it for free)."""
        estimated = False
        if not prompt:
            prompt, estimated = prompt_tokens(params["messages"], self._encoding), True
        if completion is None or (completion == 0 and text):
            completion, estimated = count_tokens(text, self._encoding), True
        return ChatResult(text, prompt, completion, estimated=estimated, finish_reason=finish_reason)

    def _once(self, params: dict[str, Any]) -> ChatResult:
        resp = self._client.chat.completions.create(**params, timeout=self._deadline.bound(self._cfg.timeout_s))
        choice = resp.choices[0]
        text = choice.message.content or ""
        usage = resp.usage
        finish = choice.finish_reason
        if usage is None:
            return self._counted(params, text, None, None, finish)
        return self._counted(params, text, usage.prompt_tokens, usage.completion_tokens, finish)

    def _stream(
        self, params: dict[str, Any], on_token: Callable[[str], None] | None, watch: LoopWatch | None = None
    ) -> ChatResult:
        parts: list[str] = []
        prompt: int | None = None
        completion: int | None = None
        finish_reason: str | None = None
        finished = False
        stream = self._client.chat.completions.create(
            **params,
            stream=True,
            stream_options={"include_usage": True},
            timeout=self._deadline.bound(self._cfg.timeout_s),
        )
        with stream:  # a stopped question closes its stream (and the connection) at the next piece
            for chunk in stream:
                if self._deadline.reason is not None:
                    break
                if chunk.usage is not None:
                    prompt = chunk.usage.prompt_tokens
                    completion = chunk.usage.completion_tokens
                    finished = True
                for choice in chunk.choices:
                    if choice.delta.content:
                        parts.append(choice.delta.content)
                        if on_token is not None:
                            on_token(choice.delta.content)
                        if watch is not None and watch.feed(choice.delta.content):
                            finish_reason, finished = LOOPED, True
                    if choice.finish_reason is not None:
                        finish_reason, finished = choice.finish_reason, True
                if finish_reason == LOOPED:
                    break  # closing the stream closes the connection: the server stops generating
        self._deadline.check("a streamed answer")
        if not finished:  # the connection closed before the last chunk: retry, never keep half an answer
            raise StreamCut(f"stream ended after {len(parts)} pieces without a finish reason")
        if finish_reason == LOOPED:
            prompt, completion = None, None  # the server's counts never came: ours, by tiktoken
        return self._counted(params, "".join(parts), prompt, completion, finish_reason)


RESTART_MARK = "\n\n[driftgraph: the stream broke off and the retried reply differs: it starts again]\n\n"


class _Resumable:
    """An ``on_token`` sink that survives a retried stream without splicing two replies into one.

    The first attempt streams live. An attempt after one that had shown text is buffered: when it ends, if it
    begins with what was shown (a deterministic model repeats itself) only the rest is sent, so each character
    is shown once; otherwise ``RESTART_MARK`` is sent and then the whole new reply. Either way the text after
    the last mark is exactly the reply that is kept (the SSE routes turn the mark into a ``restart`` event).
    """

    def __init__(self, sink: Callable[[str], None]) -> None:
        self._sink = sink
        self._shown: list[str] = []
        self._buffer: list[str] | None = None

    def restart(self) -> Callable[[str], None]:
        """The sink for the next attempt: live while nothing was shown, else a buffer ``finish`` flushes."""
        if not self._shown:
            return self._live
        self._buffer = []
        return self._buffer.append

    def _live(self, text: str) -> None:
        self._shown.append(text)
        self._sink(text)

    def finish(self, text: str) -> None:
        """The attempt that succeeded returned ``text``: show what the stream has not shown of it yet."""
        if self._buffer is None:
            return
        shown = "".join(self._shown)
        if text.startswith(shown):
            rest = text[len(shown) :]
        else:
            self._sink(RESTART_MARK)
            rest = text
        if rest:
            self._sink(rest)
        self._shown, self._buffer = [text], None


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
