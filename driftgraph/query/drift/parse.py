"""Tolerant parsing of DRIFT's structured answers: a malformed answer never kills the run (GraphRAG #2163).

Models wrap JSON in code fences, add prose around it, leave trailing commas, return scores as strings.
``parse_answer`` digs the first JSON object out of the text, cleans what is safe to clean, validates the
fields and returns either the values or the reason it failed (the caller then asks for one repair).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from driftgraph.llm.jsonreply import extract_json_object


@dataclass(frozen=True)
class Parsed:
    """What one structured answer said: its text, a 0-100 score and its follow-up questions."""

    ok: bool
    answer: str = ""
    score: float = 0.0
    follow_ups: list[str] = field(default_factory=list)
    error: str | None = None


def _score(value: Any) -> float:
    if isinstance(value, bool):
        raise ValueError("score is a boolean")
    if isinstance(value, str):
        m = re.search(r"-?\d+(?:\.\d+)?", value)
        if m is None:
            raise ValueError(f"score {value!r} is not a number")
        value = float(m.group())
    if not isinstance(value, int | float):
        raise ValueError(f"score has type {type(value).__name__}")
    return float(min(100.0, max(0.0, value)))


def _follow_ups(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        raise ValueError(f"follow_up_queries has type {type(value).__name__}")
    out = []
    for item in value:
        if isinstance(item, dict):  # {"query": "..."} is a common variation
            item = item.get("query") or item.get("question")
        if isinstance(item, str) and item.strip():
            out.append(item.strip())
    return out


def parse_answer(text: str, answer_key: str) -> Parsed:
    """Parse a primer (``intermediate_answer``) or step (``response``) reply; never raises."""
    try:
        data = extract_json_object(text)
        if answer_key not in data:
            raise ValueError(f"missing key '{answer_key}'")
        answer = data[answer_key]
        if isinstance(answer, list | dict):
            answer = json.dumps(answer, ensure_ascii=False)
        if not isinstance(answer, str):
            answer = "" if answer is None else str(answer)
        if "score" not in data:
            raise ValueError("missing key 'score'")
        return Parsed(True, answer.strip(), _score(data["score"]), _follow_ups(data.get("follow_up_queries")))
    except ValueError as err:
        return Parsed(False, error=str(err))
