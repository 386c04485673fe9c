"""The retrieval trace: what a query considered, kept, included and dropped, and why.

``Trace`` collects it during a run (pure Python, no I/O) and ``to_dict()`` is the ``trace`` object of
the JSON envelope. ``write_trace`` stores it in Neo4j in ONE round trip (``cypher/trace/write.cypher``)::

    (:Retrieval {id, mode, query, seed, params, stop_reason, cost, created_at, trace})
        -[:INCLUDED {source, item_id, rank, tokens, hop}]->(x)
        -[:DROPPED  {source, item_id, reason, rank, hop}]->(x)

``x`` is the Chunk / __Entity__ / __Community__ / Claim node; a relationship item points at the
relationship's start entity and carries the relationship id in ``item_id``. Maps are stored as JSON
strings (``params``, ``cost``, ``trace``) because Neo4j properties cannot hold maps.
Other modes use the same recorder: global/basic add items, DRIFT adds steps under ``extra``.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import os
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal

from driftgraph.errors import RequestError, RetrievalNotFound

if TYPE_CHECKING:
    from driftgraph.config import TraceConfig
    from driftgraph.query.budget import BudgetBreakdown
    from driftgraph.query.local.rewrite import Rewrite
    from driftgraph.query.local.route import Route
    from driftgraph.store.db import Store

Source = Literal["report", "entity", "relationship", "chunk", "claim"]
SOURCES: tuple[str, ...] = ("report", "entity", "relationship", "chunk", "claim")
_WRITE_KEYS = {"chunk": "chunks", "entity": "entities", "report": "reports", "claim": "claims"}
log = logging.getLogger(__name__)


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


def write_trace(
    store: Store,
    recorder: Trace,
    cfg: TraceConfig,
    *,
    query: str,
    params: dict[str, Any],
    cost: dict[str, Any],
    seed: int | None = None,
    stop_reason: str | None = None,
    context_tokens: int | None = None,
    parent_id: str | None = None,
    retrieval_id: str | None = None,
) -> str | None:
    """Store the trace (one round trip); returns the retrieval id, or None when tracing is off."""
    if not cfg.enabled:
        return None
    now = datetime.now(UTC)
    rid = retrieval_id or new_retrieval_id(recorder.mode, query, now)
    props: dict[str, Any] = {
        "id": rid,
        "mode": recorder.mode,
        "query": query,
        "seed": seed,
        "params": json.dumps(params, sort_keys=True, default=str),
        "stop_reason": stop_reason,
        "cost": json.dumps(cost, sort_keys=True),
        "created_at": now.isoformat(),
        "context_tokens": context_tokens,
        "parent_id": parent_id,
        "trace": json.dumps(recorder.to_dict(), default=str),
    }
    rows: dict[str, list[dict[str, Any]]] = {k: [] for k in (*_WRITE_KEYS.values(), "relationships")}
    dropped_left = cfg.max_dropped
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
    # The edges are CREATEd (see cypher/trace/write.cypher): one row per (status, source, id), the last one
    # winning as MERGE + SET did; sorted so the same trace always writes the same rows in the same order.
    for key, found in rows.items():
        unique = {(row["status"], row["source"], str(row["id"])): row for row in found}
        rows[key] = [unique[k] for k in sorted(unique, key=lambda k: (k[2], k[0], k[1]))]
    written = store.run("trace/write", retrieval=props, **rows)
    warn_unlinked(rid, rows, written)
    return rid


def warn_unlinked(retrieval_id: str, rows: dict[str, list[dict[str, Any]]], written: list[dict[str, Any]]) -> None:
    """Say so when a first write linked fewer of ``rows`` (the item rows sent, per label) than it was given (an
    item whose node is not in the graph): the answer stands, but its stored trace is short, and the user
    reading it in Neo4j should know."""
    if not written or not written[0]["linked"]:
        return  # a repeated write of the same retrieval links nothing, by design
    sent = sum(len(found) for found in rows.values())
    missing = sent - int(written[0]["item_rows"])
    if missing > 0:
        log.warning(
            "retrieval %s: %d of %d trace items have no node in the graph and were not linked to it",
            retrieval_id,
            missing,
            sent,
        )


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


def read_trace(store: Store, retrieval_id: str) -> dict[str, Any]:
    """The stored retrieval: properties (JSON fields decoded) and its INCLUDED/DROPPED edges."""
    rows = store.read("trace/read", id=retrieval_id)
    if not rows:
        raise RetrievalNotFound(f"no retrieval with id '{retrieval_id}' (list them with `driftgraph trace list`)")
    ret = dict(rows[0]["retrieval"])
    for key in ("params", "cost", "trace"):
        if isinstance(ret.get(key), str):
            ret[key] = json.loads(ret[key])
    return {"retrieval": ret, "edges": rows[0]["edges"]}


def list_traces(store: Store, limit: int) -> list[dict[str, Any]]:
    return store.read("trace/list", limit=limit)


def browser_cypher(retrieval_id: str) -> str:
    """The Cypher a user pastes into Neo4j Browser to see one retrieved subgraph.

    Display only: ``$id`` of ``cypher/trace/subgraph.cypher`` becomes a quoted literal (escaped), so the text
    runs as pasted; driftgraph itself only ever executes the parameterised file.
    """
    from driftgraph.store import cypher

    literal = "'" + retrieval_id.replace("\\", "\\\\").replace("'", "\\'") + "'"
    return cypher.load("trace/subgraph").replace("$id", literal)


_DURATION = re.compile(r"^\s*(\d+)\s*([smhdw])\s*$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_age(text: str) -> timedelta:
    """``30d``, ``12h``, ``90m``, ``2w``, ``45s`` -> timedelta; anything else is a one-line error."""
    m = _DURATION.match(text)
    if not m:
        raise RequestError(f"--older-than '{text}': use a number and a unit s, m, h, d or w (e.g. 30d)", "older_than")
    return timedelta(**{_UNITS[m.group(2)]: int(m.group(1))})


def prune_traces(store: Store, older_than: timedelta, dry_run: bool = False) -> int:
    """Delete retrievals (and their DRIFT steps) created before now - older_than; returns how many."""
    cutoff = (datetime.now(UTC) - older_than).isoformat()
    count = int(store.read("trace/prune_count", cutoff=cutoff)[0]["retrievals"])
    if count and not dry_run:
        store.run_auto("trace/prune", cutoff=cutoff)
    return count
