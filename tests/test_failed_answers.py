"""Never present a failure as an answer (issue 37), end to end: operation-dulce in a real Neo4j, the real openai
client against the fake server, the CLI and `driftgraph serve` as a user runs them.

Every mode's final answer is checked: a reply that is only citation markers or the same paragraph over and over
gets one retry with ``prompts/answer_retry.txt``; when that fails too the question has no answer: it is stored
with ``stop_reason: bad_answer`` and the check in its trace, ``AnswerFailed`` is raised, the CLI exits 1 with
one line, HTTP answers 502. Global search whose map batches are all unusable ends ``map_failed`` (never "the
data does not contain enough information"); some unusable gives a partial answer that says so (exit 3).
"""

from __future__ import annotations

import json
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest

from driftgraph import BasicQuery, DriftQuery, GlobalQuery, LocalQuery
from driftgraph.api import open_engine
from driftgraph.errors import AnswerFailed
from driftgraph.store.traces import read_retrieval
from tests.conftest import make_config
from tests.support.cli import run_cli
from tests.support.drift_fakes import DULCE_LAYERS, request_kind, tree_responder
from tests.support.global_fake import responder as global_responder
from tests.support.global_fake import schema_name
from tests.support.serve import Server, serve_env, write_config

QUESTION = "What is Operation: Dulce and who leads the team at Dulce base?"
BROAD = "What is the role of the Paranormal Military Squad at Dulce base?"
CITATIONS = "[Data: Sources (1, 2); Entities (3, 7)]"
PARAGRAPH = "The council changed the turbines and appointed Ines Halloran as the new chairwoman of the board."
REPEATED = "\n\n".join([PARAGRAPH] * 4)
GOOD = "Alex Mercer leads the team at Dulce base [Data: Sources (1)]."
RETRY_WORDS = "could not be used as an answer"  # prompts/answer_retry.txt
NO_DATA = "does not contain enough relevant information"  # prompts/no_data_answer.txt
MODES = ("local", "basic", "global", "drift")
DRIFT = tree_responder(layers=DULCE_LAYERS, max_level=1)


def is_answer_call(req: dict[str, Any]) -> bool:
    """The final answer call of any mode: free text (no response format) and not DRIFT's HyDE."""
    return request_kind(req) == "reduce"


def is_retry(req: dict[str, Any]) -> bool:
    return RETRY_WORDS in req["messages"][-1]["content"]


def scripted(first: str, retry: str) -> Callable[[dict[str, Any]], str]:
    """Every mode's other calls as the shared fakes answer them; the answer call gets ``first``, its retry
    ``retry``."""

    def respond(req: dict[str, Any]) -> str:
        if is_answer_call(req):
            return retry if is_retry(req) else first
        if schema_name(req) in ("report_ratings", "key_points"):
            return global_responder(req)
        return DRIFT(req)

    return respond


# pinned, so these tests do not depend on the index's calibrated entry threshold (issue 37, item 6)
PINNED = {"min_similarity": 0.42}


def _cfg(neo4j: dict, fake: Any) -> Any:
    llm = {"base_url": fake.base_url, "api_key": "test", "max_retries": 0}
    return make_config(neo4j, llm=llm, local=PINNED, drift={"local": PINNED})


def _ask(eng: Any, mode: str) -> Any:
    request = {
        "local": LocalQuery(question=QUESTION),
        "basic": BasicQuery(question=QUESTION),
        "global": GlobalQuery(question=BROAD, level=1),
        "drift": DriftQuery(question=QUESTION, max_depth=1),
    }[mode]
    return eng.query(request)


def _answer_calls(fake: Any) -> list[dict[str, Any]]:
    return [r for r in fake.chat_requests() if is_answer_call(r)]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("reply", "problem"), [(CITATIONS, "citations_only"), (REPEATED, "repeated")])
def test_an_answer_that_stays_unusable_is_no_answer_in_every_mode(dulce, fake_llm, mode, reply, problem):
    fake_llm.responder = scripted(reply, reply)
    with open_engine(_cfg(dulce, fake_llm)) as eng:
        with pytest.raises(AnswerFailed) as caught:
            _ask(eng, mode)
        err = caught.value
        assert err.retrieval_id and err.retrieval_id.startswith(f"{mode}-")
        stored = read_retrieval(eng.store, err.retrieval_id)["retrieval"]
    message = str(err)
    assert err.problem == problem and err.status == problem and "\n" not in message
    assert message.startswith(f"{mode} search: ") and f"driftgraph trace show {err.retrieval_id}" in message
    assert stored["stop_reason"] == err.stop_reason == "bad_answer" and stored["mode"] == mode
    trace = stored["trace"]
    check = trace["answer_check"]
    assert check["attempts"] == 2 and check["problems"] == [problem, problem] and check["passed"] is False
    assert check["replies"][0]["excerpt"] and check["retry_error"] is None
    assert trace["error"]["status"] == problem and trace["error"]["type"] == "AnswerFailed"
    assert any(n.startswith("answer check: attempt 1 " + problem) for n in trace["notes"])
    # the first call as the mode makes it, then exactly one retry carrying the corrective instruction
    first, retry = _answer_calls(fake_llm)
    assert not is_retry(first) and is_retry(retry)
    assert retry["messages"][:-1] == first["messages"][:-1] and len(retry["messages"]) == len(first["messages"])
    assert retry["max_tokens"] < first["max_tokens"]  # the longer prompt is paid for out of the reply's cap
    if mode == "drift":
        assert trace["reduce"]["status"] == "bad_answer" and trace["reduce"]["attempts"] == 2
        assert trace["reduce"]["loop_stop_reason"] in ("sufficient", "plateau", "exhausted", "max_depth", "budget")


@pytest.mark.parametrize("mode", MODES)
def test_a_good_retry_is_the_answer_and_is_counted(dulce, fake_llm, mode):
    fake_llm.responder = scripted(CITATIONS, GOOD)
    with open_engine(_cfg(dulce, fake_llm)) as eng:
        res = _ask(eng, mode)
        stored = read_retrieval(eng.store, res.retrieval_id)["retrieval"]
    assert res.answer and "Alex Mercer leads the team at Dulce base" in res.answer
    assert CITATIONS not in res.answer
    assert res.stop_reason not in ("bad_answer", "error") and stored["stop_reason"] == res.stop_reason
    check = res.trace.to_dict()["answer_check"]
    assert check == stored["trace"]["answer_check"]
    assert check["attempts"] == 2 and check["problems"] == ["citations_only", None] and check["passed"] is True
    assert len(_answer_calls(fake_llm)) == 2
    assert res.cost.llm_calls == len(fake_llm.chat_requests())  # the retry is a call of the run, counted
    assert any("the retry's answer was returned" in n for n in res.trace.notes)


def test_a_clean_answer_records_no_check_and_makes_one_call(dulce, fake_llm):
    fake_llm.responder = scripted(GOOD, "never asked")
    with open_engine(_cfg(dulce, fake_llm)) as eng:
        res = _ask(eng, "basic")
    assert res.answer == GOOD and res.stop_reason == "answered"
    assert "answer_check" not in res.trace.to_dict() and len(_answer_calls(fake_llm)) == 1


def test_cli_names_the_failed_answer_in_one_line_and_exits_1(dulce, fake_llm, tmp_path: Path):
    fake_llm.responder = scripted(CITATIONS, CITATIONS)
    write_config(tmp_path, local=PINNED)
    out = run_cli(["query", "local", QUESTION], dulce, fake_llm, tmp_path)
    assert out.returncode == 1 and out.stdout == "", out.stdout
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: local search: the model's reply held only citation")
    assert "retry" in lines[0] and "driftgraph trace show local-" in lines[0]
    # streamed: the unusable reply was already printed; the stream says so before the retry and at the end
    fake_llm.requests.clear()
    streamed = run_cli(["query", "basic", QUESTION, "--stream"], dulce, fake_llm, tmp_path)
    assert streamed.returncode == 1
    assert streamed.stdout.count(CITATIONS) == 2
    assert "[driftgraph: that reply is not an answer" in streamed.stdout
    assert streamed.stdout.rstrip().endswith("on the retry too]")
    assert streamed.stderr.strip().splitlines()[-1].startswith("error: basic search: ")


def _map_responder(bad: Callable[[dict[str, Any]], bool]) -> Callable[[dict[str, Any]], str]:
    """Global's fakes, except that map batches for which ``bad(request)`` holds never get JSON (nor does
    their repair)."""

    def respond(req: dict[str, Any]) -> str:
        if schema_name(req) == "key_points" and bad(req):
            return "Here are the key points: the squad investigates the base."
        return global_responder(req)

    return respond


def test_global_every_map_batch_malformed_is_an_error_not_an_absence(dulce, fake_llm, tmp_path: Path):
    fake_llm.responder = _map_responder(lambda req: True)
    with open_engine(_cfg(dulce, fake_llm)) as eng:
        with pytest.raises(AnswerFailed) as caught:
            eng.query(GlobalQuery(question=BROAD, level=1, budget=1000))
        err = caught.value
        stored = read_retrieval(eng.store, err.retrieval_id)["retrieval"]
    assert err.problem == "map_failed" and "none of the" in str(err) and "malformed" in str(err)
    assert stored["stop_reason"] == err.stop_reason == "map_failed"
    trace = stored["trace"]
    batches = trace["batches"]
    assert len(batches) > 1 and {b["status"] for b in batches} == {"malformed"}
    assert trace["map"]["outcome"] == "failed" and trace["map"]["usable"] == 0
    assert trace["map"]["malformed"] == len(batches)
    assert {r["reason"] for r in trace["reports"] if r["batch"] is not None} == {"map_malformed"}
    assert not _answer_calls(fake_llm), "no reduce: there was nothing to answer from"
    # the CLI: one line, exit 1, and never the "no relevant information" answer
    out = run_cli(["query", "global", BROAD, "--level", "1"], dulce, fake_llm, tmp_path)
    assert out.returncode == 1 and NO_DATA not in out.stdout + out.stderr
    line = out.stderr.strip().splitlines()[-1]
    assert line.startswith("error: global search: none of the") and "driftgraph trace show global-" in line


def test_global_some_batches_malformed_is_a_partial_answer_exit_3(dulce, fake_llm, tmp_path: Path):
    fake_llm.responder = _map_responder(lambda req: "----- Report 2 -----" in req["messages"][0]["content"])
    args = ["query", "global", BROAD, "--budget", "1000"]  # one report per batch
    out = run_cli(args, dulce, fake_llm, tmp_path)
    assert out.returncode == 3, out.stderr
    assert out.stdout.startswith("Note: this answer is partial. 1 of ")
    assert "map batches gave no usable reply" in out.stdout
    assert "A fake answer" in out.stdout  # the reduce still answered from the batches that were read
    assert "partial answer (stop_reason partial_map)" in out.stderr
    as_json = run_cli([*args, "--json"], dulce, fake_llm, tmp_path)
    assert as_json.returncode == 3
    env = json.loads(as_json.stdout)
    assert env["stop_reason"] == "partial_map" and env["trace"]["map"]["outcome"] == "partial"
    assert any(n.startswith("map: 1 of ") for n in env["trace"]["notes"])
    shown = run_cli(["trace", "show", env["retrieval_id"]], dulce, fake_llm, tmp_path)
    assert shown.returncode == 0 and "stop: partial_map" in shown.stdout and "note: map: 1 of" in shown.stdout


def test_global_batches_that_parsed_and_found_nothing_are_no_relevant_points(dulce, fake_llm, tmp_path: Path):
    def nothing(req: dict[str, Any]) -> str:
        return json.dumps({"points": []}) if schema_name(req) == "key_points" else global_responder(req)

    fake_llm.responder = nothing
    out = run_cli(["query", "global", BROAD, "--level", "1", "--json"], dulce, fake_llm, tmp_path)
    assert out.returncode == 0, out.stderr
    env = json.loads(out.stdout)
    assert env["stop_reason"] == "no_relevant_points" and NO_DATA in env["answer"]
    assert env["trace"]["map"]["outcome"] == "complete" and env["trace"]["map"]["malformed"] == 0


def test_http_and_openai_routes_answer_502_bad_answer(dulce, fake_llm, tmp_path: Path):
    fake_llm.responder = scripted(CITATIONS, CITATIONS)
    write_config(tmp_path, local=PINNED)
    srv = Server(tmp_path, serve_env(dulce, fake_llm)).wait_ready()
    try:
        res = httpx.post(f"{srv.url}/v1/query/local", json={"question": QUESTION}, timeout=120)
        assert res.status_code == 502, res.text
        err = res.json()["error"]
        assert err["type"] == "bad_answer" and err["code"] == "citations_only" and "trace show local-" in err["message"]
        body = {"model": "driftgraph-basic", "messages": [{"role": "user", "content": QUESTION}]}
        res = httpx.post(f"{srv.url}/v1/chat/completions", json=body, timeout=120)
        assert res.status_code == 502 and res.json()["error"]["type"] == "bad_answer", res.text
        frames: list[tuple[str, str]] = []
        with httpx.stream(
            "POST", f"{srv.url}/v1/query/basic", json={"question": QUESTION, "stream": True}, timeout=120
        ) as streamed:
            event = ""
            for line in streamed.iter_lines():
                if line.startswith("event: "):
                    event = line[7:]
                elif line.startswith("data: "):
                    frames.append((event, line[6:]))
        restarts = [json.loads(d)["text"] for e, d in frames if e == "restart"]
        assert len(restarts) == 1 and "[driftgraph: that reply is not an answer" in restarts[0], frames
        kinds = [e for e, _ in frames]
        assert kinds.index("restart") > kinds.index("token"), "the restart follows the first reply's tokens"
        assert frames[-1][0] == "error" and json.loads(frames[-1][1])["error"]["code"] == "citations_only"
    finally:
        assert srv.stop() in (0, -signal.SIGTERM), srv.output()
