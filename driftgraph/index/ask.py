"""One structured LLM request with one repair retry, shared by extraction, claims and reports.

Not ``llm.structured.ask_json`` (the query side's): indexing has no call budget, evicts both cached replies
when the repair fails too and fails the item (``CallFailed``) so the next run retries it. The repair
conversation itself is shared (``repair_messages``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, NamedTuple, TypeVar

from driftgraph.config import PromptsConfig
from driftgraph.errors import CallFailed, FatalLLMError, LLMUnavailable, ReplyFormatError
from driftgraph.llm.chat import ChatClient, ChatResult
from driftgraph.llm.structured import repair_messages

T = TypeVar("T")


class Answer(NamedTuple, Generic[T]):
    value: T
    text: str
    fresh_calls: int  # calls that reached the endpoint (0 when every call came from the cache)


class Ask(NamedTuple):
    """What one indexing request is: its ledger phase, reply cap and JSON schema (None: plain text)."""

    phase: str
    max_tokens: int
    schema: dict[str, Any] | None


def ask_json(
    chat: ChatClient, messages: list[dict[str, str]], parse: Callable[[str], T], ask: Ask, prompts: PromptsConfig
) -> Answer[T]:
    """An unparseable answer gets one repair request quoting the parse error."""
    phase, max_tokens, schema = ask
    first = _complete(chat, messages, phase, max_tokens, schema)
    fresh = int(not first.cached)
    try:
        answer = Answer(parse(first.text), first.text, fresh)
        chat.ledger.record(phase, parsed_first=1)
        return answer
    except ReplyFormatError as err:
        retry = repair_messages(messages, first.text, str(err), prompts)
        second = _complete(chat, retry, phase, max_tokens, schema)
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


def _complete(
    chat: ChatClient, messages: list[dict[str, str]], phase: str, max_tokens: int, schema: dict[str, Any] | None
) -> ChatResult:
    """A refused request (401/403/404) stops the run; one that failed after its retries fails its item, unless
    no call has ever succeeded and several failed in a row (the endpoint is not there: stop too)."""
    try:
        return chat.complete(messages, phase=phase, max_tokens=max_tokens, json_schema=schema)
    except FatalLLMError:
        raise
    except LLMUnavailable as err:
        if chat.endpoint_down():
            raise
        raise CallFailed(str(err)) from None
