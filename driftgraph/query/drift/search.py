"""``drift_search``: one DRIFT question end to end -> the shared JSON envelope plus DRIFT's own keys.

The envelope (``query/result.py``) gets ``seed``, ``stop_reason``, ``limits``, ``steps``, ``uncovered`` and
``epochs`` at the top level and ``cost.phases`` with ``hyde``, ``primer``, ``steps``, ``reduce`` and
``total``. The trace is stored as a ``(:Retrieval {mode: 'drift'})`` with INCLUDED edges to everything any
step used (one round trip, ``query/trace.write_trace``) plus the step tree (one more round trip).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from driftgraph.config import DriftConfig
from driftgraph.errors import QuestionError
from driftgraph.query.drift.graph import GraphBackend
from driftgraph.query.drift.loop import DriftLoop, Event
from driftgraph.query.drift.model import DriftRun, Step
from driftgraph.query.drift.reduce import tree_text
from driftgraph.query.result import ContextInfo, SearchResult, cost_dict
from driftgraph.query.trace import TraceItem, TraceRecorder, write_trace

if TYPE_CHECKING:
    from driftgraph.runtime import QueryDeps

PHASES = ("hyde", "primer", "steps", "reduce")
_ITEM_KEYS = {
    "chunk": "chunks",
    "entity": "entities",
    "report": "reports",
    "claim": "claims",
    "relationship": "relationships",
}


def drift_settings(cfg: DriftConfig, **overrides: Any) -> DriftConfig:
    """``cfg`` with the non-None overrides applied and validated (CLI flags: --max-llm-calls ...)."""
    updates = {k: v for k, v in overrides.items() if v is not None}
    if not updates:
        return cfg
    from driftgraph.config import ConfigError

    try:
        return DriftConfig.model_validate({**cfg.model_dump(), **updates})
    except Exception as err:  # pydantic ValidationError -> one line naming the key
        raise ConfigError(f"drift: bad override {updates}: {err}".splitlines()[0]) from None


def drift_search(
    deps: QueryDeps,
    question: str,
    cfg: DriftConfig,
    *,
    seed: int | None = None,
    on_token: Callable[[str], None] | None = None,
    on_event: Event | None = None,
    write: bool = True,
) -> SearchResult:
    """Run DRIFT for ``question`` with settings ``cfg`` (``seed`` None = ``cfg.seed``); store the trace."""
    if not question.strip():
        raise QuestionError("the question is empty")
    seed = cfg.seed if seed is None else seed
    started = time.perf_counter()
    trips = deps.store.round_trips
    backend = GraphBackend(deps, cfg)
    loop = DriftLoop(question, cfg, backend, deps.config.prompts, seed=seed, on_event=on_event, on_token=on_token)
    run = loop.run()
    seconds = time.perf_counter() - started
    per_phase = deps.ledger.to_dict(per_phase=True)
    cost = cost_dict(per_phase["total"], per_phase)
    zero = {k: 0 for k in per_phase["total"]}
    cost["phases"] = {p: per_phase.get(p, zero) for p in PHASES} | {"total": per_phase["total"]}
    extra_phases = {k: v for k, v in per_phase.items() if k not in (*PHASES, "total")}
    if extra_phases:
        cost["phases"].update(extra_phases)
    recorder = _recorder(run, seconds)
    recorder.round_trips = deps.store.round_trips - trips
    context = tree_text(run, backend.count_tokens, cfg)
    retrieval_id = None
    if write and deps.config.trace.enabled:
        retrieval_id = write_trace(
            deps.store,
            recorder,
            deps.config.trace,
            query=question,
            params={**run.limits, "seed": seed},
            cost=cost,
            seed=seed,
            stop_reason=run.stop_reason,
            context_tokens=context.tokens,
        )
        if retrieval_id is not None:
            write_steps(deps, retrieval_id, run.steps)
    return SearchResult(
        mode="drift",
        question=question,
        answer=run.answer,
        retrieval_id=retrieval_id,
        context=context,
        trace=recorder.to_dict(),
        cost=cost,
        extra={
            "seed": seed,
            "stop_reason": run.stop_reason,
            "limits": run.limits,
            "steps": [s.to_dict() for s in run.steps],
            "uncovered": [{"id": s.id, "parent": s.parent, "query": s.query, "depth": s.depth} for s in run.uncovered],
            "epochs": [e.to_dict() for e in run.epochs],
        },
    )


def _recorder(run: DriftRun, seconds: float) -> TraceRecorder:
    """The Retrieval-level trace: every item any step included (first step wins), DRIFT details in extra."""
    rec = TraceRecorder(mode="drift", question=run.question)
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
                    row["source"], row["id"], int(row.get("tokens") or 0), "included", rank=row.get("rank"), hop=step.id
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
    )
    return rec


def write_steps(deps: QueryDeps, retrieval_id: str, steps: list[Step]) -> None:
    """The step tree and each step's INCLUDED edges, in one round trip (``cypher/trace/drift_steps``)."""

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
    deps.store.run("trace/drift_steps", retrieval_id=retrieval_id, steps=rows, **items)


__all__ = ["ContextInfo", "drift_search", "drift_settings", "write_steps"]
