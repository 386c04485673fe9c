"""Global and basic search end to end: operation-dulce in a real Neo4j, the real openai client, the fake server.

The fake model (tests/support/global_fake.py) rates and maps by word overlap with the question, so which
reports are relevant is known and the control plane (batches, budgets, repair, dynamic descent, trace) can
be checked exactly.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from driftgraph.api import open_engine
from driftgraph.errors import AnswerFailed
from driftgraph.llm.tokenizer import count_tokens
from driftgraph.store.traces import read_retrieval
from tests.conftest import make_config
from tests.support.cli import run_cli as _cli
from tests.support.global_fake import map_reply, responder, schema_name

QUESTION = "What happened in the mainframe room?"
BROAD = "What is the role of the Paranormal Military Squad at Dulce base?"
ENC = "cl100k_base"


def _cfg(neo4j: dict, fake: Any, **sections: dict) -> Any:
    llm = {"base_url": fake.base_url, "api_key": "test", "max_retries": 0, **sections.pop("llm", {})}
    return make_config(neo4j, llm=llm, **sections)


def _calls(fake: Any, name: str | None) -> list[dict]:
    return [r for r in fake.chat_requests() if schema_name(r) == name]


def _prompt_tokens(request: dict) -> int:
    return sum(count_tokens(m["content"], ENC) for m in request["messages"])


def test_full_level_map_calls_equal_batches_and_trace_lists_every_report(dulce, fake_llm):
    fake_llm.responder = responder
    cfg = _cfg(dulce, fake_llm, global_={"map_cap": 3000, "level": 2})
    with open_engine(cfg) as eng:
        res = eng.query_global(BROAD)
        stored = read_retrieval(eng.store, res.retrieval_id)
    t = res.trace.to_dict()
    maps = _calls(fake_llm, "key_points")
    assert len(maps) == t["map"]["batches"] == len(t["batches"]) == t["map"]["calls"] > 1
    assert _calls(fake_llm, "report_ratings") == []
    # level 2 of operation-dulce: the 3 level-1 communities plus the 6 level-0 leaves; the root with children
    # is not part of the cut
    assert t["selection"] == {**t["selection"], "mode": "level", "selected": 9, "visited": 9}
    assert len(t["reports"]) == 9 and {r["level"] for r in t["reports"]} == {0, 1}
    assert all(b["tokens"] <= t["map"]["budget"]["context"] == 3000 for b in t["batches"])
    for r in t["reports"]:
        assert r["stage"] in ("used", "mapped") and r["batch"] is not None
        assert (r["status"] == "included") == (r["stage"] == "used") == (r["used_points"] > 0)
    assert res.answer and res.stop_reason == "answered"
    # the envelope and the stored trace agree: one INCLUDED edge per used report
    assert set(res.to_dict()) >= {"mode", "question", "answer", "retrieval_id", "context", "trace", "cost"}
    used = {r["id"] for r in t["reports"] if r["stage"] == "used"}
    assert {e["node_id"] for e in stored["edges"] if e["edge"] == "INCLUDED"} == used
    assert res.cost.llm_calls == len(fake_llm.chat_requests())
    assert set(res.cost.phases) == {"map", "reduce"}


def test_dynamic_descends_only_into_relevant_reports_and_maps_less(dulce, fake_llm):
    fake_llm.responder = responder
    cfg = _cfg(dulce, fake_llm)
    with open_engine(cfg) as eng:
        full = eng.query_global(QUESTION)
        full_maps = len(_calls(fake_llm, "key_points"))
        fake_llm.requests.clear()
        dyn = eng.query_global(QUESTION, dynamic=True)
        stored = read_retrieval(eng.store, dyn.retrieval_id)["retrieval"]
    assert stored["params"]["dynamic"] is True and stored["mode"] == "global" and stored["stop_reason"] == "answered"
    dyn_maps = len(_calls(fake_llm, "key_points"))
    t = dyn.trace.to_dict()
    assert dyn_maps == t["map"]["batches"] < full_maps == full.trace.to_dict()["map"]["batches"]
    assert len(_calls(fake_llm, "report_ratings")) == t["selection"]["rate_calls"] >= 1
    reports = {r["id"]: r for r in t["reports"]}
    low = [r for r in reports.values() if r["reason"] == "low_rating"]
    assert low and all(r["rating"] < cfg.global_.rate_threshold and r["batch"] is None for r in low)
    # the root with children was rated low, so its 3 children were never rated or read
    root = next(r for r in reports.values() if r["community"] == 0)
    assert root["reason"] == "low_rating" and root["pruned_descendants"] == 3
    assert not any(r["community"] in (7, 8, 9) for r in reports.values())
    mapped = [r for r in reports.values() if r["batch"] is not None]
    assert {r["community"] for r in mapped} == {5, 6}
    assert dyn.cost.prompt_tokens < full.cost.prompt_tokens


def test_reduce_prompt_stays_within_the_derived_budget(dulce, fake_llm):
    def verbose(request: dict) -> str:
        if schema_name(request) != "key_points":
            return responder(request)
        data = json.loads(map_reply(request))
        points = [
            {**p, "description": p["description"] + " " + " ".join(f"detail{i}" for i in range(40)), "score": s}
            for p in data["points"]
            for s in (90, 40, 0)
        ]
        return json.dumps({"points": points})

    fake_llm.responder = verbose
    window, answer = 4096, 500
    cfg = _cfg(
        dulce,
        fake_llm,
        llm={"model_context_window": window},
        global_={"map_max_tokens": 300, "reduce_cap": 256, "answer_reserve": answer},
    )
    with open_engine(cfg) as eng:
        res = eng.query_global(BROAD)
    t = res.trace.to_dict()
    mb = t["map"]["budget"]
    assert mb["context"] == mb["derived"] == window - 300 - mb["prompt"] - mb["question"] < mb["cap"]
    assert all(b["tokens"] <= mb["context"] for b in t["batches"])
    assert t["budget"]["context"] == 256 and res.context.budget == 256
    assert res.context.tokens == count_tokens(res.context.text, ENC) <= 256
    points = t["points"]
    assert {p["reason"] for p in points if p["status"] == "dropped"} == {"zero_score", "budget"}
    unused = 256 - sum(p["tokens"] for p in points if p["status"] == "included")
    assert all(p["tokens"] > unused for p in points if p["reason"] == "budget")
    assert [p["score"] for p in points if p["status"] == "included"] == sorted(
        (p["score"] for p in points if p["status"] == "included"), reverse=True
    )
    (reduce,) = _calls(fake_llm, None)
    assert reduce["max_tokens"] == answer
    assert _prompt_tokens(reduce) <= window - answer
    assert res.context.text in reduce["messages"][0]["content"]


def test_malformed_map_output_is_repaired_or_counted(dulce, fake_llm):
    def flaky(request: dict) -> str:
        if schema_name(request) == "key_points":
            system, first_try = request["messages"][0]["content"], len(request["messages"]) == 2
            if "----- Report 1 -----" in system and first_try:
                return "Here are the points: points = [oops"
            if "----- Report 2 -----" in system:
                return "I cannot answer in JSON."
        return responder(request)

    fake_llm.responder = flaky
    cfg = _cfg(dulce, fake_llm)
    with open_engine(cfg) as eng:
        res = eng.query_global(BROAD, budget=1000)  # one report per batch: 9 batches
    m = res.trace.to_dict()["map"]
    assert m["batches"] == 9 and m["repaired"] == 1 and m["malformed"] == 1
    assert m["calls"] == 9 + 1 + 1 == len(_calls(fake_llm, "key_points"))
    repair = [r for r in _calls(fake_llm, "key_points") if len(r["messages"]) == 4]
    assert len(repair) == 2 and "could not be used" in repair[0]["messages"][3]["content"]
    by_short = {r["short_id"]: r for r in res.trace.to_dict()["reports"]}
    assert by_short[2]["reason"] == "map_malformed" and by_short[2]["status"] == "dropped"
    assert by_short[1]["status"] == "included"
    bad = next(b for b in res.trace.to_dict()["batches"] if b["malformed"])
    assert bad["reports"] == [2] and "no JSON object" in bad["error"] and bad["status"] == "malformed"
    # one batch of nine was never read: a partial answer that opens by saying so (issue 37), not "answered"
    assert res.stop_reason == "partial_map" and res.partial
    assert res.answer.startswith("Note: this answer is partial. 1 of 9 map batches gave no usable reply")
    assert m["usable"] == 8 and m["outcome"] == "partial"


def test_result_does_not_depend_on_completion_order(dulce, fake_llm):
    fake_llm.responder = responder

    def slow_first(request: dict) -> float:
        system = request["messages"][0]["content"]
        return 0.3 if "----- Report 1 -----" in system else 0.0

    cfg = _cfg(dulce, fake_llm, global_={"concurrency": 4, "map_cap": 2000})
    with open_engine(cfg) as eng:
        a = eng.query_global(BROAD)
        fake_llm.delay = slow_first
        b = eng.query_global(BROAD)
        c = eng.query_global(BROAD, seed=1)
    assert a.trace.to_dict()["map"]["batches"] >= 4
    for key in ("points", "batches", "reports"):
        assert a.trace.to_dict()[key] == b.trace.to_dict()[key]
    assert a.context.text == b.context.text
    assert [r["id"] for r in c.trace.to_dict()["reports"]] != [r["id"] for r in a.trace.to_dict()["reports"]]


def test_basic_fills_the_budget_with_nearest_chunks(dulce, fake_llm):
    fake_llm.responder = responder
    cfg = _cfg(dulce, fake_llm, basic={"top_k": 2})
    with open_engine(cfg) as eng:
        res = eng.query_basic(BROAD, budget=3000)
        stored = read_retrieval(eng.store, res.retrieval_id)
    with open_engine(_cfg(dulce, fake_llm, basic={"hybrid": True})) as eng:
        hybrid = eng.query_basic("alien technology", budget=3000)
    t = res.trace.to_dict()
    items = t["items"]
    # both first hits fitted, so k doubled; then one of 4 did not fit and the room left is below any chunk
    assert t["retrieval"]["fetches"] == 2 and t["retrieval"]["k"] == 4
    assert len(items) == 4 and all(i["source"] == "chunk" for i in items)
    assert res.context.tokens == count_tokens(res.context.text, ENC) <= 3000 == t["budget"]["context"]
    unused = 3000 - sum(i["tokens"] for i in items if i["status"] == "included")
    dropped = [i for i in items if i["status"] == "dropped"]
    assert dropped and all(i["reason"] == "budget" and i["tokens"] > unused for i in dropped)
    scores = [i["score"] for i in sorted(items, key=lambda i: i["rank"])]
    assert scores == sorted(scores, reverse=True)
    (answer_call,) = fake_llm.chat_requests()[:1]
    assert "----- Source 1 -----" in answer_call["messages"][0]["content"]
    assert res.answer and t["citations"]["sources"] == {"1": items[0]["id"]}
    assert {e["node_id"] for e in stored["edges"] if e["edge"] == "INCLUDED"} == {
        i["id"] for i in items if i["status"] == "included"
    }
    assert res.cost.embedding_calls == 1 and res.cost.llm_calls == 1
    assert any("fulltext" in (i.hop or "") for i in hybrid.trace.items)
    assert hybrid.trace.extra["retrieval"]["fulltext_hits"] >= 1


def test_cli_global_and_basic_print_the_shared_envelope(dulce, fake_llm, tmp_path):
    fake_llm.responder = responder
    res = _cli(["query", "global", QUESTION, "--level", "0", "--json"], dulce, fake_llm, tmp_path)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["mode"] == "global" and out["level"] == 0 and out["dynamic"] is False
    assert out["trace"]["selection"]["selected"] == 7  # level 0: the 7 root communities
    res = _cli(["query", "global", QUESTION, "--dynamic"], dulce, fake_llm, tmp_path)
    assert res.returncode == 0, res.stderr
    assert "dynamic level 2" in res.stderr and "rating calls" in res.stderr
    res = _cli(["query", "basic", QUESTION, "--json", "--budget", "1500"], dulce, fake_llm, tmp_path)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["mode"] == "basic" and out["context"]["budget"] == 1500 and out["context"]["tokens"] <= 1500
    res = _cli(["query", "basic", "  "], dulce, fake_llm, tmp_path)
    assert res.returncode == 1 and "question is empty" in res.stderr and "Traceback" not in res.stderr


def test_unreadable_ratings_are_not_taken_as_relevant(dulce, fake_llm):
    def no_ratings(request: dict) -> str:
        return "no idea" if schema_name(request) == "report_ratings" else responder(request)

    fake_llm.responder = no_ratings
    cfg = _cfg(dulce, fake_llm, global_={"repair_retries": 0})
    with open_engine(cfg) as eng:
        with pytest.raises(AnswerFailed) as caught:
            eng.query_global(QUESTION, dynamic=True)
        stored = read_retrieval(eng.store, caught.value.retrieval_id)["retrieval"]
    trace = stored["trace"]
    sel = trace["selection"]
    assert sel["rate_malformed"] == sel["rate_batches"] == sel["rate_calls"] == 1  # the roots; no descent
    rated = [r for r in trace["reports"] if r["stage"] != "listed"]
    assert rated and all(r["rating"] is None and r["reason"] == "rating_malformed" for r in rated)
    assert sel["selected"] == 0 and not _calls(fake_llm, "key_points")
    # no report was ever judged: an error (issue 37), not "the data does not contain enough information"
    assert caught.value.problem == "rate_failed" and stored["stop_reason"] == "rate_failed"
    assert "rating batches" in str(caught.value) and "--no-dynamic" in str(caught.value)
