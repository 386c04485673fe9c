"""Is a model's reply an answer at all? The checks every mode runs before it returns text as an answer.

A small model fails in ways an HTTP status does not show: an empty reply, a reply that is nothing but the
citation string the prompt asked for (``[Data: Sources (1, 2); Entities (3)]``), the same paragraph written
out again and again, or a reply cut off at ``max_tokens``. Each is a failed answer, never an answer
(issue 37): ``check_answer`` names which, so the caller can retry once with a corrective instruction and
then report the reason in ``stop_reason``, the trace and the exit code.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Literal

Problem = Literal["empty", "citations_only", "repeated", "truncated"]

PROBLEMS: tuple[Problem, ...] = ("empty", "citations_only", "repeated", "truncated")

# [Data: Sources (1, 2); Entities (3, 7); Relationships (4); Reports (2); Claims (5)] and the bare
# [Sources (1)] / [Data: Reports (2, +more)] forms models write.
_CITATION = re.compile(r"\[\s*(?:Data\s*:)?[^\[\]]*\(\s*[\d\s,+more]*\)[^\[\]]*\]", re.IGNORECASE)
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")

MIN_REPEAT_CHARS = 40  # a unit shorter than this repeated is ordinary style ("Yes."), not a loop


def words_outside_citations(text: str) -> list[str]:
    """The words of ``text`` once every citation marker is removed."""
    return _WORD.findall(_CITATION.sub(" ", text))


def repeated(text: str) -> bool:
    """The same paragraph or sentence (40+ characters) written out three or more times, or the same
    paragraph twice when the reply is nothing else: the loop a small model falls into."""
    paragraphs = [_norm(p) for p in re.split(r"\n\s*\n", text) if len(_norm(p)) >= MIN_REPEAT_CHARS]
    if paragraphs:
        counts = Counter(paragraphs)
        top = counts.most_common(1)[0][1]
        if top >= 3 or (top >= 2 and len(counts) == 1):
            return True
    sentences = [_norm(s) for s in _SENTENCE.split(text) if len(_norm(s)) >= MIN_REPEAT_CHARS]
    return bool(sentences) and Counter(sentences).most_common(1)[0][1] >= 3


def check_answer(text: str | None, *, truncated: bool = False) -> Problem | None:
    """The first problem that makes ``text`` no answer, or None when it is one.

    ``truncated``: the server stopped the reply at ``max_tokens`` (``ChatResult.truncated``)."""
    if text is None or not text.strip():
        return "empty"
    if not words_outside_citations(text):
        return "citations_only"
    if repeated(text):
        return "repeated"
    if truncated:
        return "truncated"
    return None


def describe(problem: Problem) -> str:
    """A short phrase for messages and the trace."""
    return {
        "empty": "the model's reply was empty",
        "citations_only": "the model's reply held only citation markers, no answer",
        "repeated": "the model's reply repeated the same text over and over",
        "truncated": "the model's reply was cut off at the max_tokens limit",
    }[problem]


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()
