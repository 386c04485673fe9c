"""Checks shared by global and basic search: the question before the run, the citations after the answer."""

from __future__ import annotations

import re
from typing import Any

from driftgraph.errors import QuestionError

_NUMBER = re.compile(r"\d+")


def check_question(question: str) -> str:
    """A question must have text; surrounding whitespace is dropped."""
    if not question or not question.strip():
        raise QuestionError("the question is empty")
    return question.strip()


def map_citations(answer: str, label: str, by_short: dict[int, str]) -> dict[str, Any]:
    """``[Data: <label> (2, 7)]`` in ``answer`` mapped to ids; numbers that name no context item are listed."""
    cited: dict[int, str] = {}
    unmapped: list[int] = []
    for group in re.findall(rf"{label}\s*\(([^)]*)\)", answer or ""):
        for token in _NUMBER.findall(group):
            n = int(token)
            if n in by_short:
                cited[n] = by_short[n]
            elif n not in unmapped:
                unmapped.append(n)
    return {label.lower(): {str(k): v for k, v in sorted(cited.items())}, "unmapped": unmapped}
