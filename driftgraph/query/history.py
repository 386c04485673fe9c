"""Conversation history for multi-turn questions: a JSON list of ``{role, content}`` turns, validated."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from driftgraph.errors import HistoryError

ROLES = ("user", "assistant", "system")


def validate_history(data: Any, source: str = "history") -> list[dict[str, str]]:
    """A list of ``{"role": user|assistant|system, "content": str}``; anything else names the bad entry."""
    if not isinstance(data, list):
        raise HistoryError(f"{source}: expected a JSON list of {{role, content}} turns, got {type(data).__name__}")
    turns: list[dict[str, str]] = []
    for i, turn in enumerate(data):
        if not isinstance(turn, dict):
            raise HistoryError(f"{source}: turn {i} is not an object")
        role, content = turn.get("role"), turn.get("content")
        if role not in ROLES:
            raise HistoryError(f"{source}: turn {i} has role {role!r}; use one of {', '.join(ROLES)}")
        if not isinstance(content, str):
            raise HistoryError(f"{source}: turn {i} has no string 'content'")
        extra = set(turn) - {"role", "content"}
        if extra:
            raise HistoryError(f"{source}: turn {i} has unknown keys {sorted(extra)}")
        turns.append({"role": role, "content": content})
    return turns


def load_history(path: str | Path) -> list[dict[str, str]]:
    p = Path(path)
    if not p.is_file():
        raise HistoryError(f"history file not found: {p}")
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise HistoryError(f"{p}: not valid JSON (line {err.lineno}: {err.msg})") from None
    return validate_history(data, str(p))


def recent_turns(turns: Sequence[dict[str, str]], max_turns: int) -> list[dict[str, str]]:
    """The last ``max_turns`` user/assistant turns (system turns are not conversation)."""
    convo = [t for t in turns if t["role"] != "system"]
    return convo[-max_turns:] if max_turns else []
