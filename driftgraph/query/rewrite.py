"""Multi-turn questions (docs/concepts/local-search.md): pass a self-contained question through, rewrite the others.

A cheap rule decides whether the last question depends on the conversation (pronouns and references such
as "he", "that", "the second one", or an elliptic follow-up such as "and in 1990?"); only then is the LLM
asked, with ``prompts/rewrite_query.txt``, for a standalone question. The history itself is cut to the most
recent ``history_turns`` messages and to ``history_budget`` tokens: the newest turn, then the turns that share
the question's words (``history_text``). DRIFT and global use the same rule and rewrite (``standalone``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from driftgraph.query.history import recent_turns
from driftgraph.store.lucene import STOP_WORDS, WORD

if TYPE_CHECKING:
    from driftgraph.llm.chat import ChatClient


class HistorySettings(Protocol):
    """The two keys history selection reads (``local``, ``drift.local``)."""

    history_turns: int
    history_budget: int


_REFERENCE = re.compile(
    r"\b(he|she|it|its|they|them|their|theirs|his|her|hers|him|this|that|these|those|there|then|former|latter|"
    r"same|above|aforementioned|previous|second one|first one|last one|the other)\b",
    re.IGNORECASE,
)
_ELLIPTIC = re.compile(r"^\s*(and|but|also|what about|how about|and what|why not|or)\b", re.IGNORECASE)


@dataclass
class Rewrite:
    original: str
    query: str
    reason: str
    method: str  # "none" | "rule" | "llm"

    def to_dict(self) -> dict[str, Any]:
        return {"original": self.original, "rewritten": self.query, "reason": self.reason, "method": self.method}


def needs_rewrite(question: str) -> str | None:
    """Why the question depends on the conversation, or None when it stands alone."""
    m = _ELLIPTIC.search(question)
    if m:
        return f"elliptic follow-up ('{m.group(0).strip()}')"
    m = _REFERENCE.search(question)
    if m:
        return f"refers back ('{m.group(0)}')"
    if len(question.split()) <= 2:
        return "too short to stand alone"
    return None


def history_text(
    turns: Sequence[dict[str, str]], settings: HistorySettings, count: Callable[[str], int], question: str = ""
) -> str:
    """The turns the question needs, within ``history_budget`` tokens, as ``role: content`` lines in order.

    Of the last ``history_turns`` messages the newest always comes first (a follow-up refers to it); the
    others are taken by how many of the question's content words they share, newer first on a tie, while
    they fit. Relevance, not only recency: "and the first one you named?" may point several turns back.
    """
    recent = recent_turns(turns, settings.history_turns)
    if not recent:
        return ""
    qwords = _content_words(question)
    newest = len(recent) - 1
    others = sorted(range(newest), key=lambda i: (-len(qwords & _content_words(recent[i]["content"])), -i))
    picked: dict[int, str] = {}
    used = 0
    for i in [newest, *others]:
        line = f"{recent[i]['role']}: {recent[i]['content'].strip()}\n"
        cost = count(line)
        if used + cost > settings.history_budget:
            continue  # a smaller, still relevant turn may fit
        picked[i] = line
        used += cost
    return "".join(picked[i] for i in sorted(picked))


def _content_words(text: str) -> set[str]:
    return {w.casefold() for w in WORD.findall(text)} - STOP_WORDS


def rewrite_question(
    question: str,
    history: str,
    chat_factory: Callable[[], ChatClient],
    render: Callable[..., str],
) -> Rewrite:
    """Pass through, or ask the LLM for a standalone question (one call, only when the rule says so)."""
    if not history:
        return Rewrite(question, question, "no history", "none")
    why = needs_rewrite(question)
    if why is None:
        return Rewrite(question, question, "self-contained: no reference to earlier turns", "rule")
    res = chat_factory().complete(
        [{"role": "user", "content": render("rewrite_query", history=history, question=question)}],
        phase="rewrite",
        max_tokens=200,
    )
    text = " ".join(res.text.strip().strip('"').split())
    if not text:
        return Rewrite(question, question, f"{why}; the rewrite came back empty, kept the original", "llm")
    return Rewrite(question, text, why, "llm")
