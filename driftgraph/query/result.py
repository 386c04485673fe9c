"""The result envelope every query mode returns, and what ``--json`` prints.

The contract (issue 4, item 8)::

    {"mode", "question", "answer", "retrieval_id",
     "context": {"text", "tokens", "budget"},
     "trace": {"budget": {...}, "rewrite": {...}|null, "entry": [...], "route": {...}, "items": [...],
               "round_trips", ...},
     "cost": {"llm_calls", "prompt_tokens", "completion_tokens", "embedding_calls", "embedding_tokens"}}

Modes extend it without changing these keys: mode-specific top-level keys go in ``extra`` (DRIFT's
``seed``, ``stop_reason``, ``steps`` ...), mode-specific trace keys in the ``TraceRecorder.extra`` dict.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

COST_KEYS = ("llm_calls", "prompt_tokens", "completion_tokens", "embedding_calls", "embedding_tokens")


@dataclass
class ContextInfo:
    """The context as sent to the model: its text, its exact token count and the budget it had."""

    text: str
    tokens: int
    budget: int

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "tokens": self.tokens, "budget": self.budget}


@dataclass
class SearchResult:
    """One answered (or context-only) question in any mode."""

    mode: str
    question: str
    answer: str | None
    retrieval_id: str | None
    context: ContextInfo
    trace: dict[str, Any]
    cost: dict[str, Any]
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` document: the fixed keys first, then the mode's own keys."""
        out: dict[str, Any] = {
            "mode": self.mode,
            "question": self.question,
            "answer": self.answer,
            "retrieval_id": self.retrieval_id,
            "context": self.context.to_dict(),
            "trace": self.trace,
            "cost": self.cost,
        }
        for key, value in self.extra.items():
            if key in out:
                raise ValueError(f"mode-specific key '{key}' would overwrite the shared envelope")
            out[key] = value
        return out


def cost_dict(ledger_totals: dict[str, Any], per_phase: dict[str, Any] | None = None) -> dict[str, Any]:
    """The envelope's ``cost``: the five shared totals (plus ``cache_hits``), and ``phases`` if given."""
    out: dict[str, Any] = {k: int(ledger_totals.get(k, 0)) for k in COST_KEYS}
    out["cache_hits"] = int(ledger_totals.get("cache_hits", 0))
    if per_phase is not None:
        out["phases"] = {k: v for k, v in per_phase.items() if k != "total"}
    return out
