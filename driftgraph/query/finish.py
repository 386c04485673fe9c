"""How every mode ends: ``finish()`` counts the run's statements, stores the trace and builds the typed result.

One ending for the four modes, so the stored Retrieval, the round-trip count and the result cannot drift apart
between them. A mode hands over an ``Ending`` (answer, context, stop reason, the parameters it ran with) and
its result type; ``finish`` writes the trace (one round trip, ``store/traces.py``; DRIFT's step tree one more)
and returns the result, or, when the run ended on an endpoint error, raises that error naming the stored
retrieval. An answer that failed its check (``Ending.check``, ``query/answer.py``) ends the same way: no answer,
``stop_reason: bad_answer``, the check in ``trace.answer_check`` and a note, then ``AnswerFailed``.
``store_failed`` is the same write for a question that failed before its mode could end.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar

from driftgraph.config.secrets import redact
from driftgraph.errors import BAD_ANSWER, LLMError, QuestionStopped
from driftgraph.query.answer import AnswerCheck
from driftgraph.query.requests import QueryRequest
from driftgraph.query.result import ContextInfo, Cost, SearchResult
from driftgraph.query.trace import Trace, item_rows, new_retrieval_id
from driftgraph.store.traces import write_retrieval

if TYPE_CHECKING:
    from driftgraph.runtime import Runtime
    from driftgraph.store.db import Store

R = TypeVar("R", bound=SearchResult)
log = logging.getLogger(__name__)
AfterWrite = Callable[[str], None]


@dataclass(frozen=True)
class Stored:
    """A stored retrieval's properties besides its trace: the question as asked, the run's parameters and cost,
    and how it ended. ``retrieval_id`` rewrites an existing retrieval (the write is idempotent)."""

    query: str
    params: Mapping[str, Any] = field(default_factory=dict)
    cost: Mapping[str, Any] = field(default_factory=dict)
    seed: int | None = None
    stop_reason: str | None = None
    context_tokens: int | None = None
    parent_id: str | None = None
    retrieval_id: str | None = None


@dataclass(frozen=True)
class Ending:
    """How one run ended: what ``finish`` stores and returns.

    ``params`` are the settings and request the run used (``Retrieval.params``); ``question`` (stored and
    returned) overrides the request's when the mode answered a cleaned form of it; ``error`` is an endpoint
    error the run ended on (or ``AnswerFailed``): it is stored with the trace (``trace.error``), then raised.
    ``check`` is the answer check of the final answer call: recorded when an attempt failed it, and a failed
    check ends the run as ``bad_answer`` (``apply_check``)."""

    answer: str | None
    context: ContextInfo
    stop_reason: str
    params: Mapping[str, Any] = field(default_factory=dict)
    seed: int | None = None
    question: str | None = None
    parent_id: str | None = None
    fixed_phases: Sequence[str] | None = None
    error: LLMError | None = None
    check: AnswerCheck | None = None


def apply_check(trace: Trace, ending: Ending, mode: str) -> Ending:
    """Record an eventful answer check (``trace.answer_check`` and a note) and, when it failed, end the run
    without an answer: ``stop_reason: bad_answer`` and ``AnswerFailed`` as its error. An endpoint error the
    run already ended on stays the one raised."""
    check = ending.check
    if check is None or not check.eventful:
        return ending
    trace.extra["answer_check"] = check.to_dict()
    trace.notes.append(check.note())
    if not check.failed or ending.error is not None:
        return ending
    return replace(ending, answer=None, stop_reason=BAD_ANSWER, error=check.error(mode))


def finish(
    rt: Runtime,
    request: QueryRequest,
    trace: Trace,
    ending: Ending,
    result: type[R],
    *,
    after_write: AfterWrite | None = None,
    **mode_fields: Any,
) -> R:
    """Store the trace (unless the request or the config says not to) and build ``result``; ``after_write``
    writes more under the new retrieval id (DRIFT's steps, one round trip)."""
    ending = apply_check(trace, ending, request.mode)
    if ending.error is not None and "error" not in trace.extra:
        trace.extra["error"] = error_info(ending.error)
    cost = Cost.from_ledger(rt.ledger, fixed_phases=ending.fixed_phases)
    storing = request.store_trace and rt.config.trace.enabled
    writes = (1 + (after_write is not None)) if storing else 0
    trace.round_trips = rt.store.round_trips + writes  # every statement of this run, the trace's own included
    question = ending.question if ending.question is not None else request.question
    rid = None
    if storing:
        rid = _store(rt, trace, question, ending, cost, ending.context.tokens)
        if after_write is not None:
            after_write(rid)
    if ending.error is not None:
        ending.error.retrieval_id = ending.error.retrieval_id or rid
        raise ending.error
    return result(
        mode=request.mode,
        question=question,
        answer=ending.answer,
        retrieval_id=rid,
        context=ending.context,
        trace=trace,
        cost=cost,
        stop_reason=ending.stop_reason,
        **mode_fields,
    )


def store_failed(rt: Runtime, request: QueryRequest, err: LLMError | QuestionStopped) -> str | None:
    """Store a question that ended before its mode could, once (a mode may have stored it already): an endpoint
    error (``stop_reason: error``) or a stop (``deadline`` / ``cancelled``, ``query/deadline``), with the error
    in ``trace.error`` and the cost spent so far; returns the retrieval id. The write ignores the question's
    deadline (a stopped question is still recorded) but keeps the statement timeout."""
    if err.retrieval_id is not None or not (request.store_trace and rt.config.trace.enabled):
        return err.retrieval_id
    stop_reason = err.reason if isinstance(err, QuestionStopped) else "error"
    trace = Trace(mode=request.mode, question=request.question)
    trace.extra["error"] = error_info(err)
    trace.round_trips = rt.store.round_trips + 1
    ending = Ending(None, ContextInfo("", 0, 0), stop_reason, {"request": request.model_dump(mode="json")})
    try:
        meta = Stored(
            query=request.question,
            params=ending.params,
            cost=Cost.from_ledger(rt.ledger).to_dict(),
            stop_reason=stop_reason,
        )
        rid = store_trace(rt.store.unbounded(), trace, meta, rt.config.trace.max_dropped)
    except Exception as store_err:  # the database may be the next thing down: the first error is still the one raised
        log.warning("the failed question could not be stored (%s); the first error follows", store_err)
        return None
    err.retrieval_id = rid
    return rid


def error_info(err: LLMError | QuestionStopped) -> dict[str, object]:
    """An endpoint error or a stop as the stored trace's ``error`` object."""
    if isinstance(err, QuestionStopped):
        return {"message": str(err), "type": type(err).__name__, "reason": err.reason, "where": err.where}
    return {"message": str(err), "type": type(err).__name__, "endpoint": err.endpoint, "status": err.status}


def store_trace(store: Store, trace: Trace, meta: Stored, max_dropped: int) -> str:
    """The Retrieval node and its item rows (``item_rows``), written in one round trip; returns the id
    (``meta.retrieval_id``, or a new one). Maps are stored as JSON strings (``params``, ``cost``, ``trace``)
    because Neo4j properties cannot hold maps."""
    now = datetime.now(UTC)
    rid = meta.retrieval_id or new_retrieval_id(trace.mode, meta.query, now)
    props: dict[str, Any] = {
        "id": rid,
        "mode": trace.mode,
        "query": meta.query,
        "seed": meta.seed,
        "params": json.dumps(redact(dict(meta.params)), sort_keys=True, default=str),  # settings, never keys
        "stop_reason": meta.stop_reason,
        "cost": json.dumps(dict(meta.cost), sort_keys=True),
        "created_at": now.isoformat(),
        "context_tokens": meta.context_tokens,
        "parent_id": meta.parent_id,
        "trace": json.dumps(redact(trace.to_dict()), default=str),
    }
    write_retrieval(store, props, item_rows(trace, max_dropped))
    return rid


def _store(rt: Runtime, trace: Trace, query: str, ending: Ending, cost: Cost, context_tokens: int | None) -> str:
    meta = Stored(
        query=query,
        params=ending.params,
        cost=cost.to_dict(),
        seed=ending.seed,
        stop_reason=ending.stop_reason,
        context_tokens=context_tokens,
        parent_id=ending.parent_id,
    )
    return store_trace(rt.store, trace, meta, rt.config.trace.max_dropped)
