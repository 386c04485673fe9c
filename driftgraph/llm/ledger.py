"""Cost ledger: what a run spent, per phase, so every mode can report it the same way."""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class Cost:
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    embedding_calls: int = 0
    embedding_tokens: int = 0
    cache_hits: int = 0
    http_attempts: int = 0  # HTTP requests sent (a logical call retried twice is 3 attempts)
    retries: int = 0  # attempts after a transient error (429, 5xx, timeout, reset)
    failed_calls: int = 0  # logical calls that still failed after their retries
    format_fallbacks: int = 0  # attempts re-sent with a weaker response_format after the server refused one
    estimated_calls: int = 0  # calls whose token counts are ours (tiktoken): the server sent none
    parsed_first: int = 0  # structured replies read on the first try
    parsed_repaired: int = 0  # structured replies read only after a repair call
    unparsed: int = 0  # structured replies still unusable after their repairs
    loops_cut: int = 0  # replies cut by the loop guard once they repeated themselves (llm.loops)
    salvaged: int = 0  # cut-off replies whose complete records were kept instead of asking for a repair

    def add(self, other: Cost) -> None:
        for k, v in asdict(other).items():
            setattr(self, k, getattr(self, k) + v)

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


@dataclass
class Ledger:
    """Thread-safe totals per phase; ``phase`` names the part of a run (e.g. ``primer``)."""

    phases: dict[str, Cost] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def record(self, phase: str, **amounts: int) -> None:
        with self._lock:
            cost = self.phases.setdefault(phase, Cost())
            for k, v in amounts.items():
                setattr(cost, k, getattr(cost, k) + v)

    @property
    def total(self) -> Cost:
        with self._lock:
            out = Cost()
            for c in self.phases.values():
                out.add(c)
            return out

    def to_dict(self, per_phase: bool = False) -> dict[str, Any]:
        total = self.total.to_dict()
        if not per_phase:
            return total
        with self._lock:
            out = {k: v.to_dict() for k, v in self.phases.items()}
        out["total"] = total
        return out
