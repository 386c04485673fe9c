"""Fault injection: every query mode against an endpoint that refuses, fails, hangs, garbles or cuts its replies.

One operation-dulce import per module; each case sets a fault on the fake server (``tests/support/fake_openai``)
and asserts the outcome a user needs: a refusal or an endpoint that stays down is one ``LLMError`` line naming
the endpoint and status, with the question stored as ``stop_reason: error``; a transient fault is retried to
success and the retries are counted; one failed global batch or DRIFT step does not lose the question.
``llm.max_retries`` is 1 and the backoff 0 so the suite stays fast.
"""

from __future__ import annotations

import threading
from typing import Any

import pytest

from driftgraph import BasicQuery, DriftQuery, GlobalQuery, LocalQuery
from driftgraph.api import open_engine
from driftgraph.errors import LLMError
from tests.conftest import make_config
from tests.support.cli import run_cli
from tests.support.drift_fakes import DULCE_LAYERS, request_kind, step_query, tree_responder
from tests.support.faults import FAULTS, Fault, llm_section
from tests.support.global_fake import responder as global_responder
from tests.support.global_fake import schema_name

pytestmark = pytest.mark.e2e
QUESTION = "What happened in the mainframe room?"

DRIFT_TREE = tree_responder(layers=DULCE_LAYERS)


def answer_responder(request: dict[str, Any]) -> str:
    """One responder for every mode: DRIFT's tree, global's map/rating, a cited answer otherwise."""
    name = schema_name(request)
    if name in ("key_points", "report_ratings") or "Key point" in request["messages"][0]["content"]:
        return global_responder(request)
    if name and name.startswith("drift_") or request_kind(request) == "hyde" or _is_drift_reduce(request):
        return DRIFT_TREE(request)
    return "The mainframe room held the signal [Data: Sources (1)]."


def _is_drift_reduce(request: dict[str, Any]) -> bool:
    return "## Step s0" in request["messages"][-1]["content"]


def cfg_for(neo4j: dict, fake: Any, fault: Fault | None = None, **sections: Any) -> Any:
    """Small DRIFT settings and the ``llm`` section of ``fault`` (a healthy endpoint without one)."""
    llm = llm_section(fake, fault)
    drift = {"max_depth": 1, "primer_folds": 2, "follow_ups_per_epoch": 2, "min_score_gain": 0}
    drift.update(sections.pop("drift", {}))
    return make_config(neo4j, llm=llm, drift=drift, **sections)


def request_for(mode: str) -> Any:
    return {
        "local": LocalQuery(question=QUESTION),
        "drift": DriftQuery(question=QUESTION),
        "global": GlobalQuery(question=QUESTION, level=1),
        "basic": BasicQuery(question=QUESTION),
    }[mode]


def run_case(neo4j: dict, fake: Any, mode: str, fault_name: str) -> dict[str, Any]:
    """Run one mode under one fault; the outcome as the reliability table reports it (used by bench too)."""
    fault = FAULTS[fault_name]
    fake.responder = answer_responder
    fault.inject(fake)
    cfg = cfg_for(neo4j, fake, fault)
    printed: list[str] = []
    stream = fault.server == "stream_cut"
    with open_engine(cfg) as eng:
        try:
            res = eng.query(request_for(mode), on_token=printed.append if stream else None)
        except LLMError as err:
            stored = eng.retrieval(err.retrieval_id)["retrieval"] if err.retrieval_id else None
            return {"outcome": "error", "error": err, "stored": stored}
    total: dict[str, int] = {}
    for phase, cost in res.cost.phases.items():
        if phase != "total":
            for key, value in cost.items():
                total[key] = total.get(key, 0) + value
    return {"outcome": "answered", "result": res, "printed": "".join(printed), "total": total}


@pytest.mark.parametrize("fault_name", list(FAULTS))
@pytest.mark.parametrize("mode", ["local", "basic", "global", "drift"])
def test_every_mode_under_every_fault(dulce, fake_llm, mode, fault_name):
    fault = FAULTS[fault_name]
    out = run_case(dulce, fake_llm, mode, fault_name)
    if fault.outcome == "recovers":
        assert out["outcome"] == "answered", out.get("error")
        res, total = out["result"], out["total"]
        assert res.answer and res.retrieval_id and res.stop_reason != "error"
        assert total["retries"] >= 1  # every HTTP attempt is counted: answered, retried, or failed for good
        assert total["http_attempts"] == total["llm_calls"] + total["retries"] + total["failed_calls"]
        if fault_name == "stream_cut_once":  # the answer was streamed, cut, retried: printed exactly once
            printed = out["printed"]
            assert printed and printed.count(printed[:16]) == 1 and printed.count("[Data:") == 1
        return
    assert out["outcome"] == "error"
    err = out["error"]
    assert isinstance(err, fault.error)
    message = str(err)
    assert "\n" not in message and fault.message in message
    assert fault.base_url(fake_llm) in message
    stored = out["stored"]
    assert stored is not None and stored["stop_reason"] == "error" and stored["mode"] == mode
    assert stored["trace"]["error"]["status"] == err.status


def test_global_one_failing_batch_does_not_lose_the_question(dulce, fake_llm):
    fake_llm.responder = answer_responder
    first = "----- Report 1 -----"
    fake_llm.set_fault(
        "status:500", match=lambda r: schema_name(r) == "key_points" and first in r["messages"][0]["content"]
    )
    cfg = cfg_for(dulce, fake_llm, global_={"map_cap": 1500})
    with open_engine(cfg) as eng:
        res = eng.query(GlobalQuery(question=QUESTION, level=1))
    statuses = [b.status for b in res.batches]
    assert statuses.count("failed") == 1 and statuses.count("done") == len(statuses) - 1 >= 1
    failed = next(b for b in res.batches if b.status == "failed")
    assert failed.failure is not None and failed.failure["status"] == 500
    reports = res.trace.to_dict()["reports"]
    failed_ids = {r.id for _, r in failed.reports}
    assert {r["reason"] for r in reports if r["id"] in failed_ids} == {"map_failed"}
    # the other batches answer the question, and the answer says one batch was not read (issue 37)
    assert res.answer and res.stop_reason == "partial_map"
    assert res.answer.startswith(f"Note: this answer is partial. 1 of {len(statuses)} map batches")
    assert res.trace.to_dict()["map"]["failed"] == 1


def test_global_call_and_prompt_token_caps_hold(dulce, fake_llm):
    fake_llm.responder = answer_responder
    cfg = cfg_for(dulce, fake_llm, global_={"map_cap": 1000})
    with open_engine(cfg) as eng:
        full = eng.query(GlobalQuery(question=QUESTION, level=2))
        assert full.stop_reason == "answered" and len(full.batches) >= 4
        calls = eng.query(GlobalQuery(question=QUESTION, level=2, max_llm_calls=3))
        cap = full.cost.prompt_tokens // 2
        tokens = eng.query(GlobalQuery(question=QUESTION, level=2, max_prompt_tokens=cap))
    assert calls.stop_reason == "budget" and calls.cost.llm_calls <= 3 and calls.answer
    assert sum(b.status == "skipped" for b in calls.batches) >= 1
    assert tokens.stop_reason == "budget" and tokens.answer
    assert tokens.cost.prompt_tokens <= cap  # as the server counted them, not our estimate


def test_drift_failed_step_stays_failed_and_the_run_goes_on(dulce, fake_llm):
    fake_llm.responder = answer_responder
    cfg = cfg_for(dulce, fake_llm)
    with open_engine(cfg) as eng:
        base = eng.query(DriftQuery(question=QUESTION))
        victim = next(s.query for s in base.steps if s.depth == 1 and s.status == "done")
        fake_llm.set_fault("status:500", match=lambda r: step_query(r) == victim)
        res = eng.query(DriftQuery(question=QUESTION))
    failed = [s for s in res.steps if s.query == victim]
    assert failed and failed[0].status == "failed" and "500" in (failed[0].error or "")
    assert res.stop_reason != "error" and res.answer


def test_drift_prompt_token_cap_is_never_exceeded(dulce, fake_llm):
    fake_llm.responder = answer_responder
    cfg = cfg_for(dulce, fake_llm, drift={"max_depth": 3})
    with open_engine(cfg) as eng:
        for cap in (4000, 8000):
            res = eng.query(DriftQuery(question=QUESTION, max_prompt_tokens=cap))
            assert res.cost.prompt_tokens <= cap  # reported by the server, which counts more than we do
            assert res.limits["max_prompt_tokens"] == cap


def test_sixteen_threads_share_one_engine(dulce, fake_llm):
    fake_llm.responder = answer_responder
    fake_llm.delay = lambda req: 0.05  # calls overlap
    cfg = cfg_for(dulce, fake_llm)
    results: dict[int, Any] = {}
    errors: list[BaseException] = []
    with open_engine(cfg) as eng:

        def ask(i: int) -> None:
            try:
                request = (LocalQuery if i % 2 else BasicQuery)(question=f"{QUESTION} ({i})")
                results[i] = eng.query(request)
            except BaseException as err:  # collected, asserted below
                errors.append(err)

        threads = [threading.Thread(target=ask, args=(i,)) for i in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        stored = {i: eng.retrieval(r.retrieval_id)["retrieval"] for i, r in results.items()}
    assert not errors and len(results) == 16
    assert len({r.retrieval_id for r in results.values()}) == 16
    for i, res in results.items():
        assert res.cost.llm_calls == 1 and res.cost.phases["answer"]["llm_calls"] == 1  # its own ledger only
        assert stored[i]["query"].endswith(f"({i})") and stored[i]["cost"]["llm_calls"] == 1
    assert len(fake_llm.chat_requests()) == 16


def test_cli_errors_are_one_line_and_debug_shows_the_traceback(dulce, fake_llm, tmp_path):
    fake_llm.set_fault("status:401")
    for mode in ("local", "basic", "global", "drift"):
        plain = run_cli(["query", mode, QUESTION], dulce, fake_llm, tmp_path)
        assert plain.returncode == 1 and plain.stdout == "", plain.stdout
        lines = plain.stderr.strip().splitlines()
        assert len(lines) == 1 and "answered 401" in lines[0] and fake_llm.base_url in lines[0], plain.stderr
        assert "stored)" in lines[0]  # names the retrieval stored with stop_reason error
    debug = run_cli(["--debug", "query", "basic", QUESTION], dulce, fake_llm, tmp_path)
    assert debug.returncode != 0 and "Traceback" in debug.stderr
