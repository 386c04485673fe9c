"""Every mode's final answer call: call, check, retry once with a corrective instruction, report.

A reply that is no answer (``answer_check.check_answer``: empty, citation markers only, the same text over
and over, cut at ``max_tokens``) is never returned as one (issue 37). ``checked_answer`` makes the call; when
the reply fails the check it asks once more with ``prompts/answer_retry.txt`` appended to the last user
message, and returns an ``AnswerCheck`` that holds the answer, or None and why. ``query/finish.py`` turns a
failed check into ``stop_reason: bad_answer``, stores the retrieval with the check in ``trace.answer_check``,
and raises ``AnswerFailed`` naming it.

The retry's prompt is longer by the instruction, so its reply cap is shorter by as much: it never needs more
of the model's window than the first call. A retry the call budget refuses (global, DRIFT) or the endpoint
fails is recorded as such and the answer fails.

Streaming (``on_token``): the first reply has been shown by the time it is checked. A reply that fails is
followed in the same stream by ``RETRY_MARK`` (a line that says why it is not an answer) and then the
retry, also streamed; when the retry fails too, ``FAILED_MARK`` ends the stream, before the error. The
stored and returned answer is only ever a reply that passed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from driftgraph.errors import BAD_ANSWER, AnswerFailed, CallFailed, LLMError, OverBudget
from driftgraph.prompts import render_prompt
from driftgraph.query.answer_check import Problem, check_answer, describe

if TYPE_CHECKING:
    from driftgraph.config import PromptsConfig
    from driftgraph.llm.chat import ChatClient
    from driftgraph.runtime import Runtime

TokenSink = Callable[[str], None]
EXCERPT_CHARS = 200  # of each failed reply, kept in the trace so the failure can be read back
RETRY_MARK = "\n\n[driftgraph: that reply is not an answer ({why}); asking the model once more]\n\n"
FAILED_MARK = "\n\n[driftgraph: no answer: {why}, on the retry too]\n"
ECHO_MARK = "\n\n[driftgraph: the reply began by repeating the instruction; the answer starts again]\n\n"
MIN_ECHO_WORDS = 5  # a shorter sentence shared with the instruction ("Answer the question.") is no echo


class Reply(Protocol):
    """What an answer call gives back: ``ChatResult`` or a mode's own stand-in."""

    @property
    def text(self) -> str: ...

    @property
    def truncated(self) -> bool: ...


# (messages, max_tokens, on_token) -> the reply; raises OverBudget when the call budget refuses it, and
# LLMError / CallFailed when the endpoint fails it.
Ask = Callable[[list[dict[str, str]], int, TokenSink | None], Reply]


@dataclass(frozen=True)
class Attempt:
    """One answer call as the check saw it."""

    problem: Problem | None
    truncated: bool
    chars: int
    excerpt: str

    def to_dict(self) -> dict[str, Any]:
        return {"problem": self.problem, "truncated": self.truncated, "chars": self.chars, "excerpt": self.excerpt}


@dataclass
class AnswerCheck:
    """The answer calls of one question: each attempt's problem, the answer that passed (None: none did), and
    why no retry was made when one was needed and could not be (``retry_error``)."""

    attempts: list[Attempt] = field(default_factory=list)
    answer: str | None = None
    retry_error: str | None = None
    echo_stripped: int = 0  # characters of the retry instruction the model copied before its answer, removed

    @property
    def failed(self) -> bool:
        return self.answer is None

    @property
    def retried(self) -> bool:
        return len(self.attempts) > 1

    @property
    def problem(self) -> Problem | None:
        """The last attempt's problem (the one that decided), None when the answer passed."""
        return self.attempts[-1].problem if self.attempts else None

    @property
    def eventful(self) -> bool:
        """Some attempt failed the check: worth recording in the trace (a clean first answer adds nothing)."""
        return any(a.problem is not None for a in self.attempts)

    def to_dict(self) -> dict[str, Any]:
        """``trace.answer_check``."""
        return {
            "attempts": len(self.attempts),
            "problems": [a.problem for a in self.attempts],
            "passed": not self.failed,
            "retry_error": self.retry_error,
            "echo_stripped": self.echo_stripped,
            "replies": [a.to_dict() for a in self.attempts],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AnswerCheck:
        """Back from ``to_dict`` (DRIFT keeps its reduce's check in ``trace.reduce``); the answer itself is not
        kept there, so a passed check gets a placeholder (``finish`` only reads whether it failed)."""
        replies = data.get("replies") or [{"problem": p} for p in data.get("problems") or []]
        attempts = [
            Attempt(r.get("problem"), bool(r.get("truncated")), int(r.get("chars") or 0), str(r.get("excerpt") or ""))
            for r in replies
        ]
        return cls(attempts, "" if data.get("passed") else None, data.get("retry_error"))

    def note(self) -> str:
        """One line for ``trace.notes`` (shown by ``trace show`` and the retrieval page)."""
        return check_line(self.to_dict())

    def error(self, mode: str) -> AnswerFailed:
        """The one-line error of a failed check: what failed and what to do."""
        problem = self.problem or "empty"
        tries = (
            "on the first try and on one retry with a corrective instruction"
            if self.retried
            else f"and no retry could be made ({self.retry_error})"
        )
        message = f"{mode} search: {describe(problem)}, {tries}: no answer was returned"
        return AnswerFailed(message, problem=problem, hint=_HINTS[problem].format(mode=mode))


_HINTS = {
    "empty": "Check the model and endpoint (`driftgraph doctor`) or try a larger model",
    "citations_only": "A small model may copy the citation format instead of answering: try a larger or "
    "instruction-tuned model",
    "repeated": "The model fell into a loop: try a larger model or a repetition penalty on the server",
    "truncated": "The reply did not fit its cap: raise {mode}.answer_reserve (or drift.reduce_max_tokens)",
}


def check_line(check: dict[str, Any]) -> str:
    """``trace.answer_check`` as one line: each attempt's verdict, then the outcome."""
    verdicts = ", ".join(f"attempt {i} {p or 'ok'}" for i, p in enumerate(check.get("problems") or [], 1))
    if check.get("passed"):
        return f"answer check: {verdicts} (the retry's answer was returned)"
    why = f"; no retry: {check['retry_error']}" if check.get("retry_error") else ""
    return f"answer check: {verdicts}{why}: no answer returned (stop_reason {BAD_ANSWER})"


def checked_answer(
    ask: Ask,
    messages: Sequence[dict[str, str]],
    max_tokens: int,
    *,
    prompts: PromptsConfig,
    count_tokens: Callable[[str], int],
    on_token: TokenSink | None = None,
    evict: Callable[[Any], None] | None = None,
) -> AnswerCheck:
    """The answer call, checked; one retry with the corrective instruction when the reply is no answer.

    ``ask``'s first call may raise (an endpoint error, a refused budget): that is the caller's to handle, as
    before. ``evict`` forgets a failed reply in the call cache, so a later run asks again instead of replaying
    it."""
    out = AnswerCheck()
    problem = _take(out, ask(list(messages), max_tokens, on_token), evict)
    if problem is None:
        return out
    instruction = render_prompt("answer_retry", prompts, problem=describe(problem))
    retry = with_instruction(messages, instruction)
    cap = max(max_tokens - count_tokens(instruction) - 2, max_tokens // 2)
    if on_token is not None:
        on_token(RETRY_MARK.format(why=describe(problem)))
    try:
        reply = ask(retry, cap, on_token)
    except (OverBudget, LLMError, CallFailed) as err:
        out.retry_error = f"the retry {'found no budget left' if isinstance(err, OverBudget) else 'failed'}: {err}"
        out.retry_error = out.retry_error[:300]
        _mark_failed(on_token, problem)
        return out
    text, echoed = strip_echo(reply.text or "", instruction)
    if echoed:  # a small model may copy the corrective instruction before its answer: never part of the answer
        out.echo_stripped = echoed
        reply = _Reply(text, bool(getattr(reply, "truncated", False)), reply)
        if on_token is not None:
            on_token(ECHO_MARK)
            on_token(text)
    problem = _take(out, reply, evict)
    if problem is not None:
        _mark_failed(on_token, problem)
    return out


def strip_echo(text: str, instruction: str) -> tuple[str, int]:
    """``text`` without the run of sentences at its head that repeats ``instruction`` word for word (case,
    spacing and punctuation aside), and how many characters went. The run must be ``MIN_ECHO_WORDS`` words or
    more: an answer that opens with a few of the instruction's words keeps them."""
    said = f" {_norm_words(instruction)} "
    rest, copied = text, ""
    while True:
        head = re.match(r"\s*(.+?(?:[.!?:;](?=\s)|\n|$))", rest, re.DOTALL)
        if head is None or not head.group(1).strip():
            break
        longer = f"{copied} {_norm_words(head.group(1))}".strip()
        if f" {longer} " not in said:
            break
        copied, rest = longer, rest[head.end() :]
    if len(copied.split()) < MIN_ECHO_WORDS:
        return text, 0
    rest = rest.lstrip()
    return rest, len(text) - len(rest)


def _norm_words(text: str) -> str:
    return " ".join(re.findall(r"[^\W_]+", text.casefold()))


@dataclass(frozen=True)
class _Reply:
    """A reply whose text was cleaned (an echoed instruction removed); evicting it forgets the original."""

    text: str
    truncated: bool
    original: Any

    @property
    def cache_key(self) -> Any:
        return getattr(self.original, "cache_key", None)


def checked_chat_answer(
    rt: Runtime,
    chat: ChatClient,
    phase: str,
    messages: Sequence[dict[str, str]],
    max_tokens: int,
    on_token: TokenSink | None = None,
    ask: Ask | None = None,
) -> AnswerCheck:
    """``checked_answer`` for a mode answering through the runtime's chat client: its prompts, tokenizer and
    call cache. ``ask`` replaces the plain call (global search reserves each call in its budget)."""
    return checked_answer(
        ask or chat_ask(chat, phase),
        messages,
        max_tokens,
        prompts=rt.config.prompts,
        count_tokens=rt.count_tokens,
        on_token=on_token,
        evict=chat.evict,
    )


def with_instruction(messages: Sequence[dict[str, str]], instruction: str) -> list[dict[str, str]]:
    """The same conversation with ``instruction`` appended to the last user message (no extra turn: some chat
    templates insist that user and assistant alternate)."""
    out = [dict(m) for m in messages]
    for m in reversed(out):
        if m.get("role") == "user":
            m["content"] = f"{m.get('content') or ''}\n\n{instruction}"
            return out
    return [*out, {"role": "user", "content": instruction}]


def chat_ask(chat: Any, phase: str) -> Ask:
    """The plain ``Ask`` of one chat client: one ``complete`` call in ``phase``."""

    def ask(messages: list[dict[str, str]], max_tokens: int, on_token: TokenSink | None) -> Reply:
        result: Reply = chat.complete(messages, phase=phase, max_tokens=max_tokens, on_token=on_token)
        return result

    return ask


def _take(out: AnswerCheck, reply: Reply, evict: Callable[[Any], None] | None) -> Problem | None:
    """Record ``reply``'s check: kept as the answer when it is one, else forgotten by the call cache."""
    problem = _record(out, reply)
    if problem is None:
        out.answer = reply.text
    elif evict is not None:
        evict(reply)
    return problem


def _record(out: AnswerCheck, reply: Reply) -> Problem | None:
    text = reply.text or ""
    truncated = bool(getattr(reply, "truncated", False))
    problem = check_answer(text, truncated=truncated)
    excerpt = "" if problem is None else " ".join(text.split())[:EXCERPT_CHARS]
    out.attempts.append(Attempt(problem, truncated, len(text), excerpt))
    return problem


def _mark_failed(on_token: TokenSink | None, problem: Problem) -> None:
    if on_token is not None:
        on_token(FAILED_MARK.format(why=describe(problem)))
