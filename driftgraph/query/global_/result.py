"""Global search's result: the shared envelope plus the level, selection mode, seed and the map batches."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from driftgraph.query.global_.map import MapBatch
from driftgraph.query.global_.select import Selection
from driftgraph.query.result import SearchResult


@dataclass
class GlobalResult(SearchResult):
    """Global search: the level and selection mode used, the report-order seed, the selection and map batches
    (their JSON is in the trace: ``selection``, ``reports``, ``batches``, ``points``, ``map``).

    ``stop_reason``: answered, no_relevant_points (every batch read, nothing found), budget, or partial_map
    (some batches gave no usable reply: the answer opens by saying how many). ``map_failed`` (no batch usable),
    ``rate_failed`` (dynamic: no rating usable), ``bad_answer`` and ``error`` are stored, then raised."""

    level: int = 0
    dynamic: bool = False
    seed: int = 0
    selection: Selection | None = None
    batches: list[MapBatch] = field(default_factory=list)

    def mode_keys(self) -> dict[str, Any]:
        return {"level": self.level, "dynamic": self.dynamic, "seed": self.seed, "stop_reason": self.stop_reason}
