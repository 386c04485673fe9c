"""Typed results of every query mode, and the JSON envelope ``--json`` prints (``to_dict()``).

The envelope (docs/concepts/modes.md, "The envelope")::

    {"mode", "question", "answer", "retrieval_id",
     "context": {"text", "tokens", "budget"},
     "trace": {"budget": {...}, "rewrite": {...}|null, "entry": [...], "route": {...}, "items": [...],
               "round_trips", ...},
     "cost": {"llm_calls", "prompt_tokens", "completion_tokens", "embedding_calls", "embedding_tokens",
              "cache_hits", "phases": {...}}}

then each mode's own top-level keys: basic ``stop_reason``; global ``level, dynamic, seed, stop_reason``
(``GlobalResult``, ``query/global_/result.py``); DRIFT ``seed, stop_reason, limits, steps, uncovered, epochs``
(``DriftResult``, ``query/drift/result.py``): a mode's own result lives with the mode whose types it holds.
The JVM client, the bench and users' scripts read these keys; ``tests/test_result_contract.py`` guards them.
Code reads the attributes instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from driftgraph.query.trace import Trace

if TYPE_CHECKING:
    from driftgraph.llm.ledger import Ledger

COST_KEYS = ("llm_calls", "prompt_tokens", "completion_tokens", "embedding_calls", "embedding_tokens")
# Stop reasons of a returned answer that rests on part of the work (it says so in its text). A question that
# has no answer at all is not returned: ``bad_answer`` (the answer failed its check twice, ``query/answer.py``),
# ``map_failed`` / ``rate_failed`` (global: no map batch / no rating was usable) are stored, then raised as
# ``AnswerFailed``, like ``error`` (an endpoint error) is raised as the ``LLMError``.
PARTIAL_STOPS = frozenset({"partial_map"})


@dataclass(frozen=True)
class ContextInfo:
    """The context as sent to the model: its text, its exact token count and the budget it had."""

    text: str
    tokens: int
    budget: int

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "tokens": self.tokens, "budget": self.budget}


@dataclass(frozen=True)
class Cost:
    """What one question spent: totals, and the same counters per phase (``answer``, ``map``, ``primer`` ...)."""

    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    embedding_calls: int = 0
    embedding_tokens: int = 0
    cache_hits: int = 0
    phases: dict[str, dict[str, int]] = field(default_factory=dict)

    @classmethod
    def from_ledger(cls, ledger: Ledger, fixed_phases: Sequence[str] | None = None) -> Cost:
        """Totals and phases of a run's ledger. ``fixed_phases`` (DRIFT) lists phases that are always present,
        zero when unused, in that order, followed by any others and ``total``."""
        per_phase = ledger.to_dict(per_phase=True)
        total = per_phase["total"]
        if fixed_phases is None:
            phases = {k: v for k, v in per_phase.items() if k != "total"}
        else:
            zero = {k: 0 for k in total}
            phases = {p: per_phase.get(p, zero) for p in fixed_phases} | {"total": total}
            phases.update({k: v for k, v in per_phase.items() if k not in (*fixed_phases, "total")})
        return cls(**{k: int(total.get(k, 0)) for k in (*COST_KEYS, "cache_hits")}, phases=phases)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {k: getattr(self, k) for k in (*COST_KEYS, "cache_hits")}
        out["phases"] = self.phases
        return out


@dataclass
class SearchResult:
    """One answered (or context-only) question in any mode; each mode's subclass adds its own fields."""

    mode: str
    question: str
    answer: str | None
    retrieval_id: str | None
    context: ContextInfo
    trace: Trace
    cost: Cost
    stop_reason: str | None = None  # why the run ended: answered, context_only, no_data, DRIFT's stop rule ...

    @property
    def partial(self) -> bool:
        """An answer that says it rests on part of what was asked for (``PARTIAL_STOPS``: global search's
        ``partial_map``); the CLI exits 3 after printing it."""
        return self.stop_reason in PARTIAL_STOPS

    def mode_keys(self) -> dict[str, Any]:
        """The mode's own top-level keys of the envelope."""
        return {}

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` document: the shared keys first, then the mode's own keys."""
        out: dict[str, Any] = {
            "mode": self.mode,
            "question": self.question,
            "answer": self.answer,
            "retrieval_id": self.retrieval_id,
            "context": self.context.to_dict(),
            "trace": self.trace.to_dict(),
            "cost": self.cost.to_dict(),
        }
        for key, value in self.mode_keys().items():
            if key in out:
                raise ValueError(f"mode-specific key '{key}' would overwrite the shared envelope")
            out[key] = value
        return out


@dataclass
class LocalResult(SearchResult):
    """Local search; its ``stop_reason`` (answered, context_only, no_data) is stored, not in the envelope. (A
    ``bad_answer`` run is stored, then raised.)"""


@dataclass
class BasicResult(SearchResult):
    """Basic search; ``stop_reason`` is answered, context_only or no_chunks (``bad_answer``: stored, then raised)."""

    def mode_keys(self) -> dict[str, Any]:
        return {"stop_reason": self.stop_reason}
