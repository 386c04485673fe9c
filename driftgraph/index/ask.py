"""One structured LLM request with one repair retry, shared by extraction, claims and reports.

Not ``llm.structured.ask_json`` (the query side's): indexing has no call budget, evicts both cached replies
when the repair fails too and fails the item (``CallFailed``) so the next run retries it. The repair
conversation itself is shared (``repair_messages``).

An extraction or claims reply that was cut off (at ``max_tokens``, or by the loop guard that
``index.loop_guard`` turns on) keeps its complete records instead of asking for a repair: a model that
looped once loops again on the repair, and the cut reply, cached, gives the same records on every re-run
without another call. It is counted (``salvaged``) in the run's cost per phase."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from typing import Any, Generic, NamedTuple, TypeVar

from driftgraph.config import PromptsConfig
from driftgraph.errors import CallFailed, FatalLLMError, LLMUnavailable, ReplyFormatError
from driftgraph.llm.chat import ChatClient, ChatResult
from driftgraph.llm.jsonreply import salvage_json_object
from driftgraph.llm.structured import repair_messages

T = TypeVar("T")


class Answer(NamedTuple, Generic[T]):
    value: T
    text: str
    fresh_calls: int  # calls that reached the endpoint (0 when every call came from the cache)


class Ask(NamedTuple):
    """What one indexing request is: its ledger phase, reply cap and JSON schema (None: plain text); whether
    its reply is streamed under the loop guard, and whether a cut-off reply's complete records may be kept."""

    phase: str
    max_tokens: int
    schema: dict[str, Any] | None
    loop_guard: bool = False
    salvage: bool = False


def ask_json(
    chat: ChatClient, messages: list[dict[str, str]], parse: Callable[[str], T], ask: Ask, prompts: PromptsConfig
) -> Answer[T]:
    """An unparseable answer gets one repair request quoting the parse error."""
    phase = ask.phase
    first = _complete(chat, messages, ask)
    fresh = int(not first.cached)
    try:
        answer = Answer(parse(first.text), first.text, fresh)
        chat.ledger.record(phase, parsed_first=1)
        return answer
    except ReplyFormatError as err:
        if ask.salvage and first.truncated:
            with contextlib.suppress(ReplyFormatError):
                kept = json.dumps(_distinct(salvage_json_object(first.text)), ensure_ascii=False)
                answer = Answer(parse(kept), kept, fresh)
                chat.ledger.record(phase, salvaged=1)
                return answer
        retry = repair_messages(messages, first.text, str(err), prompts)
        second = _complete(chat, retry, ask)
        fresh += int(not second.cached)
        try:
            answer = Answer(parse(second.text), second.text, fresh)
            chat.ledger.record(phase, parsed_repaired=1)
            return answer
        except ReplyFormatError as err2:
            chat.ledger.record(phase, unparsed=1)
            chat.evict(first)  # a failed chunk is retried by the next run, not replayed from the cache
            chat.evict(second)
            raise CallFailed(f"unusable answer after one repair retry: {err2}") from None


def _complete(chat: ChatClient, messages: list[dict[str, str]], ask: Ask) -> ChatResult:
    """A refused request (401/403/404) stops the run; one that failed after its retries fails its item, unless
    no call has ever succeeded and several failed in a row (the endpoint is not there: stop too)."""
    try:
        return chat.complete(
            messages, phase=ask.phase, max_tokens=ask.max_tokens, json_schema=ask.schema, loop_guard=ask.loop_guard
        )
    except FatalLLMError:
        raise
    except LLMUnavailable as err:
        if chat.endpoint_down():
            raise
        raise CallFailed(str(err)) from None


def _distinct(obj: dict[str, Any]) -> dict[str, Any]:
    """Each top-level list without repeated records: a loop writes the same records again, word for word."""
    return {
        key: list({json.dumps(v, sort_keys=True): v for v in value}.values()) if isinstance(value, list) else value
        for key, value in obj.items()
    }
