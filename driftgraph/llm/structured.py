"""JSON answers from a chat model, read tolerantly, with one repair round instead of a crash.

Models wrap JSON in code fences, add a sentence before it, or break it off at the output cap. Global search
makes dozens of such calls per question, so a bad one must cost at most one extra call and never the whole
answer: ``ask_json`` parses, asks once for a repair (``prompts/repair_json.txt``) and otherwise reports the
output as malformed so the caller can count it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from driftgraph.errors import OverBudget
from driftgraph.llm.jsonreply import extract_json_object
from driftgraph.prompts import render_prompt

if TYPE_CHECKING:
    from driftgraph.config import PromptsConfig
    from driftgraph.llm.chat import ChatClient

T = TypeVar("T")


class Gate(Protocol):
    """A call budget (``query/global_/gate.CallGate``): reserve before a call, settle after it."""

    def reserve(self, messages: list[dict[str, str]]) -> Any: ...

    def settle(self, res: Any, prompt_tokens: int | None, error: BaseException | None = None) -> None: ...


@dataclass(frozen=True)
class JsonOutcome(Generic[T]):
    """What one structured call produced: the validated value (None when malformed) and how it went."""

    value: T | None
    calls: int
    repaired: bool
    error: str | None

    @property
    def malformed(self) -> bool:
        return self.value is None


@dataclass(frozen=True)
class JsonCall(Generic[T]):
    """What one structured call asks for: its ledger phase, reply cap, schema, the validator that turns the parsed
    object into ``T`` (raising ValueError on a bad shape) and how many repair calls it may make."""

    phase: str
    max_tokens: int
    json_schema: dict[str, Any]
    validate: Callable[[Any], T]
    repair_retries: int


def ask_json(
    chat: ChatClient,
    messages: list[dict[str, str]],
    call: JsonCall[T],
    prompts: PromptsConfig,
    gate: Gate | None = None,
) -> JsonOutcome[T]:
    """One call, then up to ``call.repair_retries`` repair calls; ``call.validate`` raises ValueError on bad shapes.

    ``gate`` (a call budget) is asked before every call: its refusal of the first call propagates, of a
    repair call ends the outcome as malformed. Endpoint errors propagate (the caller marks its batch)."""
    phase, max_tokens, json_schema = call.phase, call.max_tokens, call.json_schema
    convo = list(messages)
    error: str | None = None
    for attempt in range(call.repair_retries + 1):
        if gate is None:
            reply = chat.complete(convo, phase=phase, max_tokens=max_tokens, json_schema=json_schema)
        else:
            try:
                res = gate.reserve(convo)
            except OverBudget:
                if attempt == 0:
                    raise
                chat.ledger.record(phase, unparsed=1)
                return JsonOutcome(None, attempt, False, f"{error}; no budget left for a repair")
            try:
                reply = chat.complete(convo, phase=phase, max_tokens=max_tokens, json_schema=json_schema)
            except Exception as err:
                gate.settle(res, None, err)
                raise
            gate.settle(res, reply.prompt_tokens)
        try:
            value = call.validate(extract_json_object(reply.text))
        except (ValueError, TypeError, KeyError) as err:
            error = str(err) or type(err).__name__
        else:
            chat.ledger.record(phase, **{"parsed_repaired" if attempt else "parsed_first": 1})
            return JsonOutcome(value, attempt + 1, attempt > 0, error)
        convo = repair_messages(convo, reply.text, error, prompts)
    chat.ledger.record(phase, unparsed=1)
    return JsonOutcome(None, call.repair_retries + 1, False, error)


def repair_messages(
    messages: list[dict[str, str]], reply: str, error: str, prompts: PromptsConfig
) -> list[dict[str, str]]:
    """The conversation for a repair call: the bad reply quoted back with the parse error
    (``prompts/repair_json.txt``). Query-time and indexing-time structured calls both repair this way."""
    return [
        *messages,
        {"role": "assistant", "content": reply},
        {"role": "user", "content": render_prompt("repair_json", prompts, error=error)},
    ]


def as_int(value: Any, low: int, high: int) -> int:
    """An integer clamped to [low, high] from an int, float or numeric string; ValueError otherwise."""
    if isinstance(value, bool):
        raise ValueError(f"not a number: {value!r}")
    if isinstance(value, str):
        value = value.strip()
    number = int(round(float(value)))
    return max(low, min(high, number))
