"""Budgets derived from the deployment, and the item-by-item fill every mode uses.

``derive_budget`` does the arithmetic of README "Local search" and keeps every term, so the trace can print it::

    derived = window - answer_reserve - prompt - question - history
    context = override if given, else min(derived, cap)

``fill`` satisfies per-source floors, then fills in priority order item by item: what one source does not
use flows to the next (no fixed shares). Invariants (tested with hypothesis): the total never exceeds the
budget, and an item dropped for ``budget`` is larger than what is left unused at the end.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from driftgraph.errors import BudgetError


@dataclass(frozen=True)
class BudgetBreakdown:
    """Every term of the budget; ``context`` is what the fill may use."""

    window: int
    answer_reserve: int
    prompt: int
    question: int
    history: int
    derived: int
    cap: int
    context: int
    fixed: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "window": self.window,
            "answer_reserve": self.answer_reserve,
            "prompt": self.prompt,
            "question": self.question,
            "history": self.history,
            "derived": self.derived,
            "cap": self.cap,
            "context": self.context,
            "fixed": self.fixed,
        }


def derive_budget(
    *,
    window: int,
    answer_reserve: int,
    prompt: int,
    question: int,
    history: int,
    cap: int,
    override: int | None = None,
) -> BudgetBreakdown:
    """The context budget; fails in one line when the question does not fit the model at all."""
    if question + prompt + answer_reserve > window:
        raise BudgetError(
            f"the question ({question} tokens) plus the prompt ({prompt}) and the answer reserve ({answer_reserve}) "
            f"exceed the model window ({window} tokens, llm.model_context_window)"
        )
    derived = window - answer_reserve - prompt - question - history
    if override is not None:
        if override <= 0:
            raise BudgetError(f"--budget must be a positive number of tokens, got {override}")
        return BudgetBreakdown(window, answer_reserve, prompt, question, history, derived, cap, override, True)
    if derived <= 0:
        raise BudgetError(
            f"no room for context: window {window} - answer {answer_reserve} - prompt {prompt} - question {question}"
            f" - history {history} = {derived} tokens"
        )
    return BudgetBreakdown(window, answer_reserve, prompt, question, history, derived, cap, min(derived, cap))


@dataclass
class Candidate:
    """One item that may enter the context.

    ``tokens`` is the exact cost of its rendered row (line break included); ``rank`` is its 1-based place in
    its source's ranking, used as the short id the answer cites. ``payload`` is whatever the renderer needs.
    """

    source: str
    id: str
    tokens: int
    score: float
    rank: int = 0
    hop: str | None = None
    payload: Any = None


@dataclass
class FillResult:
    included: list[Candidate] = field(default_factory=list)
    dropped: list[tuple[Candidate, str]] = field(default_factory=list)
    used: int = 0
    budget: int = 0
    opened: list[str] = field(default_factory=list)

    @property
    def unused(self) -> int:
        return self.budget - self.used


def fill(
    candidates: Mapping[str, Sequence[Candidate]],
    order: Sequence[str],
    floors: Mapping[str, int],
    budget: int,
    header_tokens: Mapping[str, int] | None = None,
) -> FillResult:
    """Floors first (in priority order), then every source in priority order, item by item.

    A source's table header costs ``header_tokens[source]`` once, when its first item enters. Candidates of
    a source missing from ``order`` are dropped as ``not_routed``. Items keep their given order per source.
    """
    headers = header_tokens or {}
    res = FillResult(budget=budget)
    taken: set[tuple[str, str]] = set()
    opened: set[str] = set()

    def cost(c: Candidate) -> int:
        return c.tokens + (0 if c.source in opened else headers.get(c.source, 0))

    def take(c: Candidate, price: int) -> None:
        res.included.append(c)
        res.used += price
        taken.add((c.source, c.id))
        if c.source not in opened:
            opened.add(c.source)
            res.opened.append(c.source)

    for source in order:
        for c in list(candidates.get(source, ()))[: max(0, floors.get(source, 0))]:
            price = cost(c)
            if price <= budget - res.used:
                take(c, price)
    for source in order:
        for c in candidates.get(source, ()):
            if (c.source, c.id) in taken:
                continue
            price = cost(c)
            if price <= budget - res.used:
                take(c, price)
            else:
                res.dropped.append((c, "budget"))
    for source, items in candidates.items():
        if source not in order:
            res.dropped.extend((c, "not_routed") for c in items)
    res.included.sort(key=lambda c: (order.index(c.source) if c.source in order else len(order), c.rank))
    return res
