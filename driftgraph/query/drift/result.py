"""DRIFT's result: the shared envelope plus the seed, the limits in force, the step tree and the epochs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from driftgraph.query.drift.model import Epoch, Step
from driftgraph.query.result import SearchResult


@dataclass
class DriftResult(SearchResult):
    """DRIFT: the seed, the limits in force, the step tree, the follow-ups left uncovered, the epochs."""

    seed: int = 0
    limits: dict[str, Any] = field(default_factory=dict)
    steps: list[Step] = field(default_factory=list)
    uncovered: list[Step] = field(default_factory=list)
    epochs: list[Epoch] = field(default_factory=list)

    @property
    def stop(self) -> dict[str, Any]:
        """The evidence behind ``stop_reason`` (``trace.stop``): the rule's thresholds, every sufficient check
        (which answers agreed, by which measure) and the failed steps."""
        value = self.trace.extra.get("stop")
        return value if isinstance(value, dict) else {}

    def mode_keys(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "stop_reason": self.stop_reason,
            "limits": self.limits,
            "steps": [s.to_dict() for s in self.steps],
            "uncovered": [{"id": s.id, "parent": s.parent, "query": s.query, "depth": s.depth} for s in self.uncovered],
            "epochs": [e.to_dict() for e in self.epochs],
        }
