"""``drift_search``: one DRIFT question end to end -> the shared JSON envelope plus DRIFT's own keys.

The envelope (``query/result.py``) gets ``seed``, ``stop_reason``, ``limits``, ``steps``, ``uncovered`` and
``epochs`` at the top level and ``cost.phases`` with ``hyde``, ``primer``, ``steps``, ``reduce`` and
``total``; ``trace.stop`` holds the evidence behind the stop reason (``stop.py``). The trace is stored as a
``(:Retrieval {mode: 'drift'})`` with INCLUDED edges to everything any step used (one round trip,
``query/finish.py``) plus the step tree (one more round trip).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from driftgraph.errors import LLMUnavailable
from driftgraph.query.drift.graph import GraphBackend
from driftgraph.query.drift.loop import DriftLoop, Event, Listeners
from driftgraph.query.drift.model import DriftRun, Step
from driftgraph.query.drift.reduce import reduce_check, tree_text
from driftgraph.query.drift.result import DriftResult
from driftgraph.query.finish import Ending, error_info, finish
from driftgraph.query.requests import DriftQuery
from driftgraph.query.standalone import standalone
from driftgraph.query.trace import Trace, TraceItem
from driftgraph.store.traces import write_steps as store_steps

if TYPE_CHECKING:
    from driftgraph.runtime import Runtime

PHASES = ("hyde", "primer", "steps", "reduce")
_ITEM_KEYS = {
    "chunk": "chunks",
    "entity": "entities",
    "report": "reports",
    "claim": "claims",
    "relationship": "relationships",
}


def drift_search(
    rt: Runtime,
    request: DriftQuery,
    *,
    on_token: Callable[[str], None] | None = None,
    on_event: Event | None = None,
) -> DriftResult:
    """Run DRIFT for the request (its overrides applied to the ``drift`` section); store the trace."""
    cfg = request.settings(rt.config)
    started = time.perf_counter()
    rewrite, spent = standalone(rt, request.question, request.history, cfg.local)  # multi-turn follow-ups
    question, seed = (rewrite.query if rewrite else request.question), cfg.seed
    if spent["llm_calls"]:  # the rewrite call counts against DRIFT's own budget
        cfg = cfg.model_copy(
            update={
                "max_llm_calls": max(1, cfg.max_llm_calls - spent["llm_calls"]),
                "max_prompt_tokens": max(1000, cfg.max_prompt_tokens - spent["prompt_tokens"]),
            }
        )
    backend = GraphBackend(rt, cfg)
    loop = DriftLoop(question, cfg, backend, rt.config.prompts, seed=seed, listen=Listeners(on_event, on_token))
    run = loop.run()
    seconds = time.perf_counter() - started
    recorder = _recorder(run, seconds)
    recorder.rewrite = rewrite
    error = None
    if run.stop_reason == "error":  # stored with its steps; the caller gets the one-line endpoint error
        error = run.error or LLMUnavailable("DRIFT: the LLM endpoint failed every call")
        recorder.extra["error"] = error_info(error)
    params = {**run.limits, "seed": seed, "request": request.model_dump(mode="json")}
    ending = Ending(
        run.answer,
        tree_text(run, backend.count_tokens, cfg),
        run.stop_reason,
        params,
        seed=seed,
        error=error,
        fixed_phases=PHASES,
        check=reduce_check(run.reduce),  # a reduce that stayed no answer ends the run as bad_answer
    )
    return finish(
        rt,
        request,
        recorder,
        ending,
        DriftResult,
        after_write=lambda rid: write_steps(rt, rid, run.steps),
        seed=seed,
        limits=run.limits,
        steps=list(run.steps),
        uncovered=list(run.uncovered),
        epochs=list(run.epochs),
    )


def _recorder(run: DriftRun, seconds: float) -> Trace:
    """The Retrieval-level trace: every item any step included (first step wins), DRIFT details in extra."""
    rec = Trace(mode="drift", question=run.question)
    seen: set[tuple[str, str]] = set()
    for step in run.steps:
        if step.context is None or step.status == "uncovered":
            continue
        for row in step.context.items:
            key = (row["source"], row["id"])
            if key in seen:
                continue
            seen.add(key)
            rec.add_item(
                TraceItem(
                    row["source"],
                    row["id"],
                    int(row.get("tokens") or 0),
                    "included",
                    rank=row.get("rank"),
                    hop=step.id,
                    rerank_score=row.get("rerank_score"),
                )
            )
    rec.timings["total"] = seconds
    rec.extra.update(
        call_budget=run.budget,  # the run's budget; ``budget`` stays the local-search breakdown's key
        hyde=run.hyde,
        primer=run.primer,
        reduce=run.reduce,
        dropped_follow_ups=run.dropped_follow_ups,
        step_budgets={s.id: s.context.budget for s in run.steps if s.context is not None and s.context.budget},
        stop=run.stop,  # the stop reason's evidence: every sufficient check, which answers agreed and by what
    )
    return rec


def write_steps(rt: Runtime, retrieval_id: str, steps: list[Step]) -> None:
    """The step tree and each step's INCLUDED edges as rows, written in one round trip (``store/traces.py``)."""

    def sid(step_id: str | None) -> str | None:
        return None if step_id is None else f"{retrieval_id}:{step_id}"

    rows = [
        {
            "id": sid(s.id),
            "step_id": s.id,
            "parent": sid(s.parent),
            "query": s.query,
            "depth": s.depth,
            "score": s.score,
            "status": s.status,
            "answer": s.answer,
            "error": s.error,
            "epoch": s.epoch,
            "kind": s.kind,
        }
        for s in steps
    ]
    items: dict[str, list[dict[str, Any]]] = {k: [] for k in _ITEM_KEYS.values()}
    for s in steps:
        if s.context is None or s.status == "uncovered":
            continue
        for row in s.context.items:
            key = _ITEM_KEYS.get(row["source"])
            if key:
                items[key].append(
                    {"step": sid(s.id), "id": row["id"], "rank": row.get("rank"), "tokens": row.get("tokens")}
                )
    for key, found in items.items():  # one row per (step, id), the last winning (edges are CREATEd: query/trace.py)
        unique = {(str(row["id"]), str(row["step"])): row for row in found}
        items[key] = [unique[k] for k in sorted(unique)]
    store_steps(rt.store, retrieval_id, rows, items)
