"""The JSON envelope is a contract (the JVM client, the bench and users' scripts read it): its keys and their
types are written out here by hand, per mode, and checked against real runs on operation-dulce. Code reads
typed attributes; ``to_dict()`` must keep producing exactly this."""

from __future__ import annotations

from typing import Any

from driftgraph import (
    BasicQuery,
    BasicResult,
    DriftQuery,
    DriftResult,
    GlobalQuery,
    GlobalResult,
    LocalQuery,
    LocalResult,
    open_engine,
)
from driftgraph.query.trace import TraceItem
from tests.conftest import make_config
from tests.support.drift_fakes import DULCE_LAYERS, tree_responder
from tests.support.global_fake import responder as global_responder

NUM = (int, float)
OPT_STR = (str, type(None))
SHARED = {
    "mode": str,
    "question": str,
    "answer": OPT_STR,
    "retrieval_id": OPT_STR,
    "context": dict,
    "trace": dict,
    "cost": dict,
}
CONTEXT = {"text": str, "tokens": int, "budget": int}
COST = {
    "llm_calls": int,
    "prompt_tokens": int,
    "completion_tokens": int,
    "embedding_calls": int,
    "embedding_tokens": int,
    "cache_hits": int,
    "phases": dict,
}
TRACE = {
    "budget": (dict, type(None)),
    "rewrite": (dict, type(None)),
    "entry": list,
    "route": (dict, type(None)),
    "items": list,
    "round_trips": int,
    "absent_sources": list,
    "citations": (dict, type(None)),
    "notes": list,
    "timings": dict,
}
ITEM = {"source": str, "id": str, "tokens": int, "status": str, "reason": OPT_STR}
BUDGET = {
    "window": int,
    "answer_reserve": int,
    "prompt": int,
    "question": int,
    "history": int,
    "derived": int,
    "cap": int,
    "context": int,
    "fixed": bool,
}
MODE_KEYS: dict[str, dict[str, Any]] = {
    "local": {},
    "basic": {"stop_reason": str},
    "global": {"level": int, "dynamic": bool, "seed": int, "stop_reason": str},
    "drift": {"seed": int, "stop_reason": str, "limits": dict, "steps": list, "uncovered": list, "epochs": list},
}
TRACE_EXTRA = {
    "local": {"ppr", "thresholds", "fill"},  # ppr: the walked graph's size; thresholds, fill: issue 37
    "basic": {"retrieval"},
    "global": {"map", "selection", "reports", "batches", "points", "call_budget"},  # call_budget: issue 13
    "drift": {"call_budget", "hyde", "primer", "reduce", "dropped_follow_ups", "step_budgets", "stop"},  # stop: 37
}
STEP = {"id": str, "parent": OPT_STR, "query": str, "depth": int, "status": str}


def _typed(obj: dict[str, Any], spec: dict[str, Any], where: str) -> None:
    for key, kind in spec.items():
        assert key in obj, f"{where}: missing '{key}'"
        assert isinstance(obj[key], kind), f"{where}.{key}: {type(obj[key]).__name__}"


def _check(out: dict[str, Any], mode: str) -> None:
    assert list(out)[:7] == list(SHARED), "the shared keys come first, in this order"
    assert set(out) == set(SHARED) | set(MODE_KEYS[mode])
    _typed(out, SHARED | MODE_KEYS[mode], mode)
    assert out["mode"] == mode
    _typed(out["context"], CONTEXT, "context")
    assert set(out["context"]) == set(CONTEXT)
    _typed(out["cost"], COST, "cost")
    assert set(out["cost"]) == set(COST)
    _typed(out["trace"], TRACE, "trace")
    assert set(out["trace"]) == set(TRACE) | TRACE_EXTRA[mode]
    if out["trace"]["budget"] is not None:
        _typed(out["trace"]["budget"], BUDGET, "trace.budget")
    for item in out["trace"]["items"]:
        _typed(item, ITEM, "trace.items[]")
    for step in out.get("steps", []):
        _typed(step, STEP, "steps[]")


def _cfg(neo4j: dict, fake: Any) -> Any:
    return make_config(neo4j, llm={"base_url": fake.base_url, "api_key": "test", "max_retries": 0})


def test_every_mode_keeps_the_envelope_and_exposes_typed_attributes(dulce, fake_llm):
    with open_engine(_cfg(dulce, fake_llm)) as eng:
        local = eng.query(LocalQuery(question="Who is Alex Mercer?", context_only=True))
        basic = eng.query(BasicQuery(question="Who is Alex Mercer?", context_only=True))
        fake_llm.responder = global_responder
        glob = eng.query(GlobalQuery(question="What are the main themes?"))
        fake_llm.responder = tree_responder(layers=DULCE_LAYERS)
        drift = eng.query(DriftQuery(question="What is Operation: Dulce?", max_depth=1))
    for result, mode, kind in (
        (local, "local", LocalResult),
        (basic, "basic", BasicResult),
        (glob, "global", GlobalResult),
        (drift, "drift", DriftResult),
    ):
        assert isinstance(result, kind)
        _check(result.to_dict(), mode)
        assert result.retrieval_id and result.retrieval_id.startswith(f"{mode}-")
    # attributes, not dicts read back
    assert isinstance(local.trace.items[0], TraceItem) and local.trace.items[0].status in ("included", "dropped")
    assert local.trace.budget is not None and local.context.tokens <= local.trace.budget.context
    assert local.stop_reason == "context_only" and basic.stop_reason == "context_only"
    assert glob.cost.llm_calls == glob.to_dict()["cost"]["llm_calls"] > 0 and glob.selection is not None
    assert drift.steps and drift.steps[0].id == "s0" and drift.seed == 0
    assert drift.cost.phases.keys() >= {"hyde", "primer", "steps", "reduce", "total"}
