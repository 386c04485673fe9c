"""Budgets derived from the deployment, and the item-by-item fill every mode uses.

``derive_budget`` does the arithmetic of docs/concepts/local-search.md and keeps every term, so the trace can print it::

    derived = window - answer_reserve - prompt - question - history
    context = override if given, else min(derived, cap)

``fill`` satisfies per-source floors, then fills in priority order item by item: what one source does not
use flows to the next. Optional per-source caps (tokens) hold a source back until every source has had its
turn; then what is left is offered again in priority order, caps lifted, so a cap never leaves room unused.
An item with a shorter form (a report's summary) enters in that form when the full one does not fit what
is left, and is upgraded to the full form at the end if the room is there. Invariants (tested with
hypothesis): the total never exceeds the budget, and an item dropped for ``budget`` or ``source_cap`` is
larger, in its shortest form, than what is left unused at the end.
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


@dataclass(frozen=True)
class Demand:
    """What the model window must hold besides the context, in tokens, and the configured cap on the context."""

    window: int
    answer_reserve: int
    prompt: int
    question: int
    history: int
    cap: int


def derive_budget(demand: Demand, override: int | None = None) -> BudgetBreakdown:
    """The context budget (``override``: a fixed size); fails in one line when the question does not fit the
    model at all."""
    window, answer_reserve, prompt = demand.window, demand.answer_reserve, demand.prompt
    question, history, cap = demand.question, demand.history, demand.cap
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
    short: Candidate | None = None  # a shorter form of the same item (a report's summary), same source/id/rank
    form: str | None = None  # set on a short form: what it is ("summary")
    why: str | None = None  # set when the short form entered: why the full one did not


@dataclass
class FillResult:
    included: list[Candidate] = field(default_factory=list)
    dropped: list[tuple[Candidate, str]] = field(default_factory=list)
    used: int = 0
    budget: int = 0
    opened: list[str] = field(default_factory=list)
    used_by: dict[str, int] = field(default_factory=dict)  # tokens per source, its table header included

    @property
    def unused(self) -> int:
        return self.budget - self.used


def fill(
    candidates: Mapping[str, Sequence[Candidate]],
    order: Sequence[str],
    floors: Mapping[str, int],
    budget: int,
    header_tokens: Mapping[str, int] | None = None,
    caps: Mapping[str, int] | None = None,
) -> FillResult:
    """Floors first (in priority order), then every source in priority order, item by item, within its cap;
    then, caps lifted, what did not get in is offered the rest; last, short forms are upgraded where room is.

    A source's table header costs ``header_tokens[source]`` once, when its first item enters. Candidates of
    a source missing from ``order`` are dropped as ``not_routed``. Items keep their given order per source.
    An item the cap held back while the budget had room for it is dropped as ``source_cap`` if it never
    gets in later; otherwise as ``budget``.
    """
    return _Filler(budget, header_tokens or {}, caps or {}).run(candidates, order, floors)


class _Filler:
    """One fill's state: what is taken, per-source use, and which items a cap held back."""

    def __init__(self, budget: int, headers: Mapping[str, int], caps: Mapping[str, int]) -> None:
        self.res = FillResult(budget=budget)
        self.headers = headers
        self.caps = caps
        self.taken: dict[tuple[str, str], Candidate] = {}
        self.capped: set[tuple[str, str]] = set()
        self.full_of: dict[tuple[str, str], Candidate] = {}  # items that entered in short form -> full form

    def cost(self, c: Candidate) -> int:
        return c.tokens + (0 if c.source in self.res.used_by else self.headers.get(c.source, 0))

    def room(self, source: str, capped: bool) -> int:
        left = self.res.budget - self.res.used
        if capped and source in self.caps:
            return min(left, self.caps[source] - self.res.used_by.get(source, 0))
        return left

    def take(self, c: Candidate, price: int) -> None:
        res = self.res
        res.included.append(c)
        res.used += price
        if c.source not in res.used_by:
            res.used_by[c.source] = 0
            res.opened.append(c.source)
        res.used_by[c.source] += price
        self.taken[(c.source, c.id)] = c

    def offer(self, c: Candidate, capped: bool) -> bool:
        """Take ``c`` in full, or its short form, within the room its source has now."""
        room = self.room(c.source, capped)
        price = self.cost(c)
        if price <= room:
            self.take(c, price)
            return True
        short = c.short
        if short is not None and self.cost(short) <= room:
            what = "its source's cap" if room < self.res.budget - self.res.used else "the budget"
            short.why = f"full form ({c.tokens} tokens) did not fit the {room} left within {what}"
            self.take(short, self.cost(short))
            self.full_of[(c.source, c.id)] = c
            return True
        if capped and min(price, self.cost(short) if short else price) <= self.res.budget - self.res.used:
            self.capped.add((c.source, c.id))
        return False

    def run(
        self, candidates: Mapping[str, Sequence[Candidate]], order: Sequence[str], floors: Mapping[str, int]
    ) -> FillResult:
        res = self.res
        for source in order:
            for c in list(candidates.get(source, ()))[: max(0, floors.get(source, 0))]:
                self.offer(c, capped=True)
        for capped in (True, False):
            for source in order:
                for c in candidates.get(source, ()):
                    if (c.source, c.id) not in self.taken:
                        self.offer(c, capped)
        self._upgrade()
        for source in order:
            for c in candidates.get(source, ()):
                if (c.source, c.id) not in self.taken:
                    res.dropped.append((c, "source_cap" if (c.source, c.id) in self.capped else "budget"))
        for source, items in candidates.items():
            if source not in order:
                res.dropped.extend((c, "not_routed") for c in items)
        res.included.sort(key=lambda c: (order.index(c.source) if c.source in order else len(order), c.rank))
        return res

    def _upgrade(self) -> None:
        """Short forms become full again, best first, where the difference still fits."""
        res = self.res
        for i, c in enumerate(list(res.included)):
            full = self.full_of.get((c.source, c.id))
            if full is None or res.included[i] is full:
                continue
            extra = full.tokens - c.tokens
            if extra <= res.budget - res.used:
                res.included[i] = full
                res.used += extra
                res.used_by[c.source] += extra
                self.taken[(c.source, c.id)] = full
                del self.full_of[(c.source, c.id)]
