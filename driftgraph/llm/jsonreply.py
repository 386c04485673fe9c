"""Reading the JSON object out of a chat model's reply, tolerantly, for every structured call.

Models wrap JSON in code fences, add prose around it, leave trailing commas or raw newlines in strings.
Extraction, community reports, DRIFT steps and global map/rate calls all need the same forgiveness, so it
lives here once; each caller validates the object's fields itself and decides about a repair call.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from driftgraph.errors import ReplyFormatError

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")


def _brackets(text: str, start: int) -> Iterator[tuple[int, str]]:
    """``(offset, character)`` of every bracket from ``start`` on that is not inside a JSON string."""
    in_str = escaped = False
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
        elif ch in "{}[]":
            yield i, ch


def _first_object(text: str) -> str | None:
    """The first balanced ``{...}`` in ``text``, honouring strings and escapes."""
    start = text.find("{")
    while start != -1:
        depth = 0
        for i, ch in _brackets(text, start):
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    return text[start : i + 1]
        start = text.find("{", start + 1)
    return None


def extract_json_object(text: str) -> dict[str, Any]:
    """The JSON object in a model's reply: plain, fenced, inside prose, with trailing commas forgiven.

    Raises ``ReplyFormatError`` with a short reason (sent back to the model in a repair prompt).
    """
    candidates: list[str] = []
    stripped = text.strip()
    if stripped and "{" not in stripped:
        raise ReplyFormatError("no JSON object in the reply")
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
    raise ReplyFormatError(last_err)


def salvage_json_object(text: str) -> dict[str, Any]:
    """The complete part of a reply that was cut off (at ``max_tokens``, or by the loop guard): the JSON object
    up to its last complete array element, with the brackets still open closed.

    ``{"entities": [{...}, {...}, {"title": "Sal`` gives ``{"entities": [{...}, {...}]}``. Only elements that
    were closed by the model are kept; a cut string or number is never completed. Raises ``ReplyFormatError``
    when no array element was complete."""
    start = text.find("{")
    if start == -1:
        raise ReplyFormatError("no JSON object in the reply")
    stack: list[str] = []
    cut: tuple[int, str] | None = None  # (end of the last complete array element, the closers it needs)
    for i, ch in _brackets(text, start):
        if ch in "{[":
            stack.append("}" if ch == "{" else "]")
            continue
        if not stack or stack.pop() != ch:
            break  # not JSON any more: keep what was complete before it
        if not stack:
            return extract_json_object(text[start : i + 1])  # the object was complete after all
        if stack[-1] == "]" and ch == "}":
            cut = (i + 1, "".join(reversed(stack)))
    if cut is None:
        raise ReplyFormatError("the reply was cut off before its first complete record")
    end, closers = cut
    return extract_json_object(text[start:end] + closers)
