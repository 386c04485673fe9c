"""The retrieval trace: what a query considered, kept, included and dropped, and why.

Data only, no I/O: ``Trace`` collects it during a run, ``to_dict()`` is the ``trace`` object of the JSON
envelope and ``item_rows`` the rows its stored form links to the graph. Every mode uses the same recorder
(global/basic add items, DRIFT adds steps under ``extra``); ``query/finish.py`` stores it through
``store/traces.py`` (one round trip) as the mode ends.
"""

from __future__ import annotations

import hashlib
import itertools
import os
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from driftgraph.query.budget import BudgetBreakdown
    from driftgraph.query.rewrite import Rewrite
    from driftgraph.query.route import Route

Source = Literal["report", "entity", "relationship", "chunk", "claim"]
SOURCES: tuple[str, ...] = ("report", "entity", "relationship", "chunk", "claim")
_WRITE_KEYS = {"chunk": "chunks", "entity": "entities", "report": "reports", "claim": "claims"}


@dataclass
class EntryCandidate:
    """One entry-point candidate (an entity, or a chunk vector hit) with its scores and verdict."""

    id: str
    title: str
    score: float
    status: Literal["kept", "dropped"]
    reason: str | None = None
    kind: Literal["entity", "chunk", "report"] = "entity"
    similarity: float | None = None
    vector_rank: int | None = None
    fulltext_rank: int | None = None
    fused: float | None = None
    named: bool | None = None
    rule: str | None = None  # entities kept: 'similarity', or which named-entity bypass rule let it through


@dataclass
class TraceItem:
    """One context candidate: included with its rank and tokens, or dropped with a reason.

    ``hop`` says how the item was reached (e.g. ``vector``, ``entity``, ``seed_chunk``); ``rank`` is its
    position in its source's ranking (1-based), which is also its short id in the rendered tables.
    """

    source: str
    id: str
    tokens: int
    status: Literal["included", "dropped"]
    reason: str | None = None
    rank: int | None = None
    hop: str | None = None
    score: float | None = None
    via: str | None = None  # e.g. the rare entity a second-hop chunk shares with a seed chunk
    depth: int | None = None  # chunks: the hop that found it (1 entry, 2 seed hop, 3+ multi-hop bridge)
    rerank_score: float | None = None  # the reranker's relevance score, when local.rerank ran
    form: str | None = None  # a shorter form entered instead of the full item ("summary" for a report)
    why: str | None = None  # with ``form``: why the full item did not enter
    location: str | None = None  # chunks: the page, slide or heading path it came from ("pages 3-4")


@dataclass
class Trace:
    """Collects one run's trace. Modes fill the shared fields and put anything else in ``extra``."""

    mode: str
    question: str
    budget: BudgetBreakdown | None = None
    rewrite: Rewrite | None = None
    entry: list[EntryCandidate] = field(default_factory=list)
    route: Route | None = None
    items: list[TraceItem] = field(default_factory=list)
    round_trips: int = 0
    absent_sources: list[str] = field(default_factory=list)
    citations: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    def add_entry(self, candidate: EntryCandidate) -> None:
        self.entry.append(candidate)

    def add_item(self, item: TraceItem) -> None:
        self.items.append(item)

    def included(self, source: str | None = None) -> list[TraceItem]:
        return [i for i in self.items if i.status == "included" and (source is None or i.source == source)]

    def dropped(self, source: str | None = None) -> list[TraceItem]:
        return [i for i in self.items if i.status == "dropped" and (source is None or i.source == source)]

    def to_dict(self) -> dict[str, Any]:
        """The envelope's ``trace`` object (issue 4 item 8), plus the optional extras."""
        out: dict[str, Any] = {
            "budget": self.budget.to_dict() if self.budget is not None else None,
            "rewrite": self.rewrite.to_dict() if self.rewrite is not None else None,
            "entry": [_as_dict(e) for e in self.entry],
            "route": self.route.to_dict() if self.route is not None else None,
            "items": [_as_dict(i) for i in self.items],
            "round_trips": self.round_trips,
            "absent_sources": list(self.absent_sources),
            "citations": self.citations,
            "notes": list(self.notes),
            "timings": {k: round(v, 4) for k, v in self.timings.items()},
        }
        for key, value in self.extra.items():
            if key in out:
                raise ValueError(f"trace extra '{key}' would overwrite a shared trace key")
            out[key] = value
        return out


_CONTRACT_KEYS = frozenset({"id", "title", "score", "status", "reason", "source", "tokens"})


def _as_dict(row: EntryCandidate | TraceItem) -> dict[str, Any]:
    """A row as a dict in field order: the contract keys always (None too), the optional ones only when set
    (smaller JSON). One pass over the instance dict: every field is a scalar, and a trace holds hundreds of
    rows, so ``asdict``'s deep copy, or even ``fields()`` per row, was most of the envelope's build time."""
    return {k: v for k, v in vars(row).items() if v is not None or k in _CONTRACT_KEYS}


def new_retrieval_id(mode: str, question: str, now: datetime) -> str:
    """Readable, sortable, unique: ``local-20250101T120000-1a2b3c4d`` (a hash, not a random draw)."""
    digest = hashlib.sha1(f"{question}\0{now.isoformat()}\0{os.getpid()}\0{_counter()}".encode()).hexdigest()
    return f"{mode}-{now:%Y%m%dT%H%M%S}-{digest[:8]}"


_COUNT = itertools.count(1)


def _counter() -> int:
    """Distinct per call in this process, also across serve's worker threads (``next`` on a count is atomic)."""
    return next(_COUNT)


def item_rows(recorder: Trace, max_dropped: int) -> dict[str, list[dict[str, Any]]]:
    """The trace's items as the rows ``cypher/trace/write.cypher`` links, per label: every included item, and
    dropped ones (items, then entry entities cut before expansion) up to ``max_dropped``. One row per (status,
    source, id), the last one winning, sorted: the same trace always writes the same rows in the same order."""
    rows: dict[str, list[dict[str, Any]]] = {k: [] for k in (*_WRITE_KEYS.values(), "relationships")}
    dropped_left = max_dropped
    for item in recorder.items:
        if item.status == "dropped":
            if dropped_left <= 0:
                continue
            dropped_left -= 1
        key = _WRITE_KEYS.get(item.source, "relationships" if item.source == "relationship" else "")
        if not key:
            continue
        rows[key].append(_row(item.source, item))
    for cand in recorder.entry:
        # Entry entities cut before expansion never become items; keep their verdict in the graph too.
        if cand.kind == "entity" and cand.status == "dropped" and dropped_left > 0:
            dropped_left -= 1
            rows["entities"].append(
                {
                    "id": cand.id,
                    "status": "dropped",
                    "source": "entry",
                    "rank": cand.vector_rank,
                    "tokens": None,
                    "reason": cand.reason,
                    "hop": "entry",
                }
            )
    for key, found in rows.items():
        unique = {(row["status"], row["source"], str(row["id"])): row for row in found}
        rows[key] = [unique[k] for k in sorted(unique, key=lambda k: (k[2], k[0], k[1]))]
    return rows


def _row(source: str, item: TraceItem) -> dict[str, Any]:
    return {
        "id": item.id,
        "status": item.status,
        "source": source,
        "rank": item.rank,
        "tokens": item.tokens,
        "reason": item.reason,
        "hop": item.hop,
    }
