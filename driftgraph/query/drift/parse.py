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

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")


@dataclass(frozen=True)
class Parsed:
    """What one structured answer said: its text, a 0-100 score and its follow-up questions."""

    ok: bool
    answer: str = ""
    score: float = 0.0
    follow_ups: list[str] = field(default_factory=list)
    error: str | None = None


def _first_object(text: str) -> str | None:
    """The first balanced ``{...}`` in ``text``, honouring strings and escapes."""
    start = text.find("{")
    while start != -1:
        depth = 0
        in_str = False
        escaped = False
        for i in range(start, len(text)):
            ch = text[i]
            if in_str:
                if escaped:
                    escaped = False
                elif ch == "\\":
                    escaped = True
                elif ch == '"':
                    in_str = False
            elif ch == '"':
                in_str = True
            elif ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    return text[start : i + 1]
        start = text.find("{", start + 1)
    return None


def extract_json(text: str) -> dict[str, Any]:
    """The JSON object in a model's reply; raises ``ValueError`` with a short reason when there is none."""
    candidates: list[str] = []
    stripped = text.strip()
    if stripped and "{" not in stripped:
        raise ValueError("no JSON object in the reply")
    if stripped:
        candidates.append(stripped)
    candidates += [m.strip() for m in _FENCE.findall(text)]
    obj = _first_object(text)
    if obj is not None:
        candidates.append(obj)
    last_err = "no JSON object in the reply" if stripped else "empty reply"
    for cand in candidates:
        for variant in (cand, _TRAILING_COMMA.sub(r"\1", cand)):
            try:
                value = json.loads(variant, strict=False)
            except json.JSONDecodeError as err:
                last_err = f"invalid JSON: {err.msg} at line {err.lineno} column {err.colno}"
                continue
            if isinstance(value, dict):
                return value
            last_err = f"expected a JSON object, got {type(value).__name__}"
    raise ValueError(last_err)


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
        data = extract_json(text)
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
