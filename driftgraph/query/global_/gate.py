"""Global search's call budget and its failure record: asked before every rating, map and reduce call.

The budget is DRIFT's ``Budget`` (``query/drift/stop.py``): ``global.max_llm_calls`` calls and
``global.max_prompt_tokens`` prompt tokens, each call's estimate scaled by the calibration ratio plus a
margin and reserved *before* the call, so the caps are never exceeded; the reduce call and its prompt are
held back from the start, so a budget that stops the map still leaves room for the answer. A refused
reservation raises ``OverBudget`` (the batch is skipped, ``stop_reason: budget``). Endpoint errors are
counted here too: when no call was answered and some failed, the question is an error, not an empty answer.
Reservations are taken as calls start; with ``concurrency`` > 1 which batch meets the cap first may vary.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from driftgraph.errors import LLMError, OverBudget
from driftgraph.query.calls import FIRST_MARGIN, MARGIN, Budget, Reservation

if TYPE_CHECKING:
    from driftgraph.config import GlobalConfig
    from driftgraph.runtime import Runtime


class CallGate:
    """One question's budget plus the count of answered and failed calls (thread-safe)."""

    def __init__(self, rt: Runtime, settings: GlobalConfig) -> None:
        self.budget = Budget(
            settings.max_llm_calls, settings.max_prompt_tokens, first_margin=FIRST_MARGIN, margin=MARGIN
        )
        self._rt = rt
        self.fired = False
        self.answered = 0
        self.errors: list[LLMError] = []
        self._lock = threading.Lock()

    def count(self, messages: list[dict[str, str]]) -> int:
        """Prompt tokens as OpenAI counts a chat request: content plus ~4 per message and 3 per reply."""
        return sum(self._rt.count_tokens(m.get("content") or "") + 4 for m in messages) + 3

    def hold(self, messages: list[dict[str, str]]) -> None:
        self.budget.hold(1, self.count(messages))

    def release(self) -> None:
        self.budget.release_hold()

    def reserve(self, messages: list[dict[str, str]]) -> Reservation:
        res = self.budget.reserve(self.count(messages))
        if res is None:
            with self._lock:
                self.fired = True
            raise OverBudget(f"global budget: {self.budget.to_dict()}")
        return res

    def settle(self, res: Reservation, prompt_tokens: int | None, error: BaseException | None = None) -> None:
        """Count what the call used (a failed call keeps its whole reservation) and how it went."""
        self.budget.settle(res, res.tokens if prompt_tokens is None else prompt_tokens)
        with self._lock:
            if error is None:
                self.answered += 1
            elif isinstance(error, LLMError):
                self.errors.append(error)

    @property
    def all_failed(self) -> bool:
        """Calls failed and none was answered: the endpoint, not the question, is the problem."""
        with self._lock:
            return bool(self.errors) and self.answered == 0

    def to_dict(self) -> dict[str, Any]:
        with self._lock:
            return {**self.budget.to_dict(), "fired": self.fired, "answered": self.answered, "failed": len(self.errors)}


def failure(err: BaseException) -> dict[str, Any]:
    """A failed batch's reason and status for the trace."""
    status = getattr(err, "status", None)
    return {"reason": str(err)[:300], "status": status, "type": type(err).__name__}
