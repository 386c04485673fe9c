"""DRIFT's stop rule: within the call budget it shares with global search (``query/calls.py``: never exceeded),
four reasons to end the loop early.
``StopRule.after_epoch`` checks, in this order, ``budget``, ``sufficient``, ``plateau``, ``exhausted``
and ``max_depth``; the first that fires is the reported reason.
"""

from __future__ import annotations

from dataclasses import dataclass

STOP_REASONS = ("budget", "sufficient", "plateau", "exhausted", "max_depth", "error")


@dataclass(frozen=True)
class EpochState:
    """What the stop rule looks at after an epoch (or after the primer, as epoch 0)."""

    depth: int
    best_before: float | None
    best_after: float | None
    queue_size: int
    budget_fired: bool
    calls_left: int


@dataclass(frozen=True)
class StopRule:
    sufficient_score: float
    min_score_gain: float
    max_depth: int

    def after_epoch(self, s: EpochState) -> str | None:
        """The first reason that fires, or ``None`` to run another epoch."""
        if s.budget_fired or s.calls_left <= 0:
            return "budget"
        if s.best_after is not None and s.best_after >= self.sufficient_score:
            return "sufficient"
        if s.depth >= 1:
            gain = (s.best_after or 0.0) - (s.best_before or 0.0)
            if gain < self.min_score_gain:
                return "plateau"
        if s.queue_size == 0:
            return "exhausted"
        if s.depth >= self.max_depth:
            return "max_depth"
        return None
