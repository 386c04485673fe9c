"""The call budget DRIFT and global search share: chat calls and prompt tokens that are never exceeded.

``Budget.reserve`` is asked before every chat call with the call's estimated prompt tokens; it says no when the
call would take the run over ``max_llm_calls`` or ``max_prompt_tokens`` (counting what is held back for the
reduce call). The estimate is scaled by the calibration ratio (how much more the server counted than we did,
learnt from every reply) plus a margin, larger until the first reply calibrates it; the held-back reduce is
scaled by the same rule, so its reservation cannot outgrow its hold. Reservations are made one by one in rank
order, before concurrent calls run, so which calls fit does not depend on which thread finishes first.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass

FIRST_MARGIN = 0.25  # reserved on top of the estimate until a reply tells how the server counts
MARGIN = 0.05  # reserved on top once calibrated (tokenizers disagree a little from prompt to prompt)


@dataclass
class Reservation:
    tokens: int  # what was reserved (the calibrated estimate)
    estimate: int  # our own count of the prompt
    settled: bool = False


class Budget:
    """Chat calls and prompt tokens of one run. Thread-safe; reservations are settled with real usage."""

    def __init__(
        self, max_calls: int, max_prompt_tokens: int, *, first_margin: float = 0.0, margin: float = 0.0
    ) -> None:
        self.max_calls = max_calls
        self.max_prompt_tokens = max_prompt_tokens
        self.first_margin = first_margin  # extra share reserved while no reply has told how the server counts
        self.margin = margin  # extra share reserved once calibrated
        self._calibrated = False
        self.calls = 0
        self.tokens = 0  # settled usage plus open reservations
        self.ratio = 1.0  # highest reported/estimated prompt tokens seen: later estimates are scaled by it
        self._held_calls = 0
        self._held_tokens = 0
        self._lock = threading.Lock()

    def hold(self, calls: int, tokens: int) -> None:
        """Keep room for a later call (the reduce) that ordinary reservations may not use."""
        with self._lock:
            self._held_calls += calls
            self._held_tokens += tokens

    def release_hold(self) -> None:
        with self._lock:
            self._held_calls = self._held_tokens = 0

    def fits(self, tokens: int) -> bool:
        with self._lock:
            return self._fits(tokens)

    def _scaled(self, tokens: int) -> int:
        """An estimate as the server will count it: the calibration ratio plus the margin in force."""
        margin = self.margin if self._calibrated else self.first_margin
        return math.ceil(tokens * self.ratio * (1.0 + margin))

    def _fits(self, tokens: int) -> bool:
        """``tokens`` is already scaled; the held-back reduce is scaled the same way (both sides, one rule)."""
        return (
            self.calls + 1 + self._held_calls <= self.max_calls
            and self.tokens + tokens + self._scaled(self._held_tokens) <= self.max_prompt_tokens
        )

    def reserve(self, tokens: int) -> Reservation | None:
        """Take one call and ``tokens`` prompt tokens (scaled by the calibration ratio and margin), or ``None``."""
        with self._lock:
            scaled = self._scaled(tokens)
            if not self._fits(scaled):
                return None
            self.calls += 1
            self.tokens += scaled
            return Reservation(scaled, tokens)

    def settle(self, res: Reservation, actual_tokens: int) -> None:
        """Count the larger of reservation and reported usage, and learn how the server counts.

        The endpoint's tokenizer may count more than ours; the ratio makes later reservations cover that,
        so a deviation can only surprise the first call of a run.
        """
        with self._lock:
            if not res.settled:
                self.tokens += max(0, actual_tokens - res.tokens)
                if res.estimate > 0 and actual_tokens > res.estimate:
                    self.ratio = max(self.ratio, actual_tokens / res.estimate)
                self._calibrated = self._calibrated or actual_tokens > 0
                res.settled = True

    @property
    def calls_left(self) -> int:
        with self._lock:
            return self.max_calls - self.calls - self._held_calls

    def to_dict(self) -> dict[str, float]:
        with self._lock:
            return {
                "llm_calls": self.calls,
                "prompt_tokens": self.tokens,
                "max_llm_calls": self.max_calls,
                "max_prompt_tokens": self.max_prompt_tokens,
                "estimate_ratio": round(self.ratio, 4),
            }
