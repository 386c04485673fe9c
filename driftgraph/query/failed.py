"""A question the LLM endpoint failed: stored as a retrieval with ``stop_reason: error``, never lost.

``Engine.query`` calls ``store_failed`` when a mode raises an ``LLMError`` (a refused key, an endpoint that
stays down): the Retrieval node keeps the question, the request, what was spent until then and the error
(``trace.error``: message, endpoint, status), so ``driftgraph trace list`` shows the failed run too. The
error then leaves with ``retrieval_id`` set and its one line names the stored retrieval.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from driftgraph.errors import LLMError
from driftgraph.query.requests import QueryRequest
from driftgraph.query.result import Cost
from driftgraph.query.trace import Trace, write_trace

if TYPE_CHECKING:
    from driftgraph.runtime import Runtime


def error_info(err: LLMError) -> dict[str, object]:
    return {"message": str(err), "type": type(err).__name__, "endpoint": err.endpoint, "status": err.status}


def store_failed(rt: Runtime, request: QueryRequest, err: LLMError) -> str | None:
    """Store the failed question once (a mode may have stored it already); returns the retrieval id."""
    if err.retrieval_id is not None or not (request.store_trace and rt.config.trace.enabled):
        return err.retrieval_id
    recorder = Trace(mode=request.mode, question=request.question)
    recorder.extra["error"] = error_info(err)
    cost = Cost.from_ledger(rt.ledger)
    try:
        rid = write_trace(
            rt.store,
            recorder,
            rt.config.trace,
            query=request.question,
            params={"request": request.model_dump(mode="json")},
            cost=cost.to_dict(),
            stop_reason="error",
        )
    except Exception:  # the database may be the next thing down: the LLM error is still the one to report
        return None
    err.retrieval_id = rid
    return rid
