"""Deadlines and cancellation end to end (issue 36, "work that never stops"): a question over its limit, or whose
client went away, or in flight at SIGTERM, stops, frees its slot and is stored with why and what it spent; a
Neo4j that stops answering fails a question within ``neo4j.query_timeout_s``; page floods do not starve
``/readyz``. The model is the fake OpenAI server made to hang; Neo4j is real."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest

from driftgraph import LocalQuery
from driftgraph.api import open_engine
from driftgraph.errors import QuestionStopped
from tests.conftest import make_config
from tests.support.fake_openai import FakeOpenAI
from tests.support.serve import Server, serve_env, write_config

pytestmark = [pytest.mark.e2e, pytest.mark.neo4j]
QUESTION = "Who leads the team at Dulce base?"
SLACK_S = 1.0  # the bound: a stopped question's slot is free within its limit plus one second


@pytest.fixture
def hung(fake_llm: FakeOpenAI) -> Iterator[FakeOpenAI]:
    """A model that answers nothing until the test ends (then its held requests finish at once)."""
    release = threading.Event()
    fake_llm.delay = lambda req: float(release.wait(120)) * 0.0
    yield fake_llm
    release.set()
    fake_llm.delay = lambda req: 0.0


def _stored(neo4j: dict, rid: str) -> dict[str, Any]:
    with open_engine(make_config(neo4j)) as eng:
        return eng.retrieval(rid)["retrieval"]


def _newest(url: str) -> dict[str, Any]:
    rows = httpx.get(f"{url}/v1/retrievals", params={"limit": 1}, timeout=30).json()["retrievals"]
    assert rows, "nothing stored"
    return dict(rows[0])


def _wait_idle(url: str, limit_s: float) -> float:
    """Seconds until the server reports no question running (fails after ``limit_s``)."""
    start = time.monotonic()
    while httpx.get(f"{url}/readyz", timeout=30).json().get("running", 1):
        assert time.monotonic() - start < limit_s, "the stopped question still holds its slot"
        time.sleep(0.05)
    return time.monotonic() - start


def test_the_python_api_stops_a_question_at_its_own_limit_and_stores_what_it_spent(dulce: dict, hung: FakeOpenAI):
    cfg = make_config(dulce, llm={"base_url": hung.base_url, "api_key": "t", "max_retries": 0})
    with open_engine(cfg) as eng:
        eng.query(LocalQuery(question=QUESTION, context_only=True))  # warm: a cold embedder can take 2 s alone
        start = time.monotonic()
        with pytest.raises(QuestionStopped) as caught:
            eng.query(LocalQuery(question=QUESTION, timeout_s=2))
        took = time.monotonic() - start
    err = caught.value
    assert err.reason == "deadline" and "ran out of time (2s)" in str(err), str(err)
    assert hung.chat_requests(), "the question reached the model before its limit"
    assert took < 2 + 30, "the abandoned model call did not hold the question to the model's own timeout"
    assert err.retrieval_id is not None and f"retrieval {err.retrieval_id} stored" in str(err)
    stored = _stored(dulce, err.retrieval_id)
    assert stored["stop_reason"] == "deadline"
    assert stored["trace"]["error"]["reason"] == "deadline"
    assert stored["cost"]["phases"]["answer"]["http_attempts"] >= 1, "the cost says what was spent before the stop"
    assert stored["cost"]["embedding_calls"] >= 1


def test_a_hung_model_is_504_at_the_limit_and_the_slot_is_free_within_a_second(
    dulce: dict, hung: FakeOpenAI, tmp_path: Path
) -> None:
    write_config(tmp_path, {"max_concurrency": 1, "request_timeout_s": 60})
    srv = Server(tmp_path, serve_env(dulce, hung)).wait_ready()
    try:
        sent = time.monotonic()
        res = httpx.post(f"{srv.url}/v1/query/local", json={"question": QUESTION, "timeout_s": 3}, timeout=60)
        answered = time.monotonic() - sent
        freed = answered + _wait_idle(srv.url, 3 + SLACK_S)
        newest = _newest(srv.url)
    finally:
        srv.stop()
    assert res.status_code == 504, res.text
    error = res.json()["error"]
    assert error["code"] == "timeout" and "the request's timeout_s=3s" in error["message"], error
    assert freed <= 3 + SLACK_S + 2, f"slot freed {freed:.1f}s after the request (limit 3s)"
    assert newest["stop_reason"] == "deadline", newest


def test_a_client_that_goes_away_cancels_its_question(dulce: dict, hung: FakeOpenAI, tmp_path: Path) -> None:
    write_config(tmp_path, {"max_concurrency": 1, "request_timeout_s": 60})
    srv = Server(tmp_path, serve_env(dulce, hung)).wait_ready()
    try:
        with pytest.raises(httpx.ReadTimeout):  # the client gives up after 2 s and closes its connection
            httpx.post(f"{srv.url}/v1/query/local", json={"question": QUESTION}, timeout=2)
        _wait_idle(srv.url, 10)
        newest = _newest(srv.url)
        again = httpx.post(f"{srv.url}/v1/query/local", json={"question": QUESTION, "context_only": True}, timeout=60)
    finally:
        srv.stop()
    assert newest["stop_reason"] == "cancelled", newest
    assert again.status_code == 200, "the slot is free for the next question"
    assert "question local via http failed" in srv.output()


def test_a_streamed_question_whose_client_leaves_is_cancelled(dulce: dict, hung: FakeOpenAI, tmp_path: Path) -> None:
    write_config(tmp_path, {"max_concurrency": 1, "request_timeout_s": 60})
    srv = Server(tmp_path, serve_env(dulce, hung)).wait_ready()
    try:
        seen = len(hung.chat_requests())
        with httpx.stream(
            "POST", f"{srv.url}/v1/query/local", json={"question": QUESTION, "stream": True}, timeout=60
        ) as res:
            assert res.status_code == 200
            deadline = time.monotonic() + 30
            while len(hung.chat_requests()) <= seen:  # the question is at the model: leave
                assert time.monotonic() < deadline, "the question never reached the model"
                time.sleep(0.05)
        _wait_idle(srv.url, 10)
        newest = _newest(srv.url)
    finally:
        srv.stop()
    assert newest["stop_reason"] == "cancelled", newest


def test_sigterm_ends_within_the_grace_and_stores_the_question_it_cancelled(
    dulce: dict, hung: FakeOpenAI, tmp_path: Path
) -> None:
    grace = 6.0
    write_config(tmp_path, {"shutdown_grace_s": grace, "request_timeout_s": 120})
    srv = Server(tmp_path, serve_env(dulce, hung)).wait_ready()
    out: dict[str, Any] = {}
    seen = len(hung.chat_requests())

    def ask() -> None:
        out["res"] = httpx.post(f"{srv.url}/v1/query/local", json={"question": QUESTION}, timeout=120)

    worker = threading.Thread(target=ask)
    worker.start()
    deadline = time.monotonic() + 60
    while len(hung.chat_requests()) <= seen:
        assert time.monotonic() < deadline, "the question never reached the model"
        time.sleep(0.05)
    signalled = time.monotonic()
    srv.proc.send_signal(signal.SIGTERM)
    try:
        srv.proc.wait(grace * 3)
    finally:
        took = time.monotonic() - signalled
        srv.stop()
    worker.join(30)
    assert took <= grace + 3, f"shutdown took {took:.1f}s for a grace of {grace:g}s"
    res = out["res"]
    assert res.status_code == 503 and res.json()["error"]["type"] == "cancelled", res.text
    rid = res.json()["error"]["message"].rsplit("retrieval ", 1)[1].split(" ")[0]
    assert _stored(dulce, rid)["stop_reason"] == "cancelled"


def test_a_flood_of_page_requests_does_not_starve_readyz(dulce: dict, fake_llm: FakeOpenAI, tmp_path: Path):
    write_config(tmp_path, {"max_page_concurrency": 1})
    srv = Server(tmp_path, serve_env(dulce, fake_llm)).wait_ready()
    try:
        rid = httpx.post(
            f"{srv.url}/v1/query/local", json={"question": QUESTION, "context_only": True}, timeout=120
        ).json()["retrieval_id"]
        with ThreadPoolExecutor(24) as pool:
            flood = [pool.submit(httpx.get, f"{srv.url}/retrievals/{rid}", timeout=120) for _ in range(48)]
            ready = [httpx.get(f"{srv.url}/readyz", timeout=30) for _ in range(5)]
            statuses = [f.result().status_code for f in flood]
    finally:
        srv.stop()
    assert all(r.status_code == 200 for r in ready), [r.text for r in ready]
    assert set(statuses) <= {200, 429}, statuses
    assert 200 in statuses


def test_neo4j_that_stops_answering_fails_the_question_within_the_statement_timeout(
    own_neo4j: Any, fake_llm: FakeOpenAI, tmp_path: Path
) -> None:
    """SIGSTOP freezes the server mid-question: the trace write waits ``neo4j.query_timeout_s`` (3 s) plus one
    second, then the CLI exits non-zero with one line naming the setting."""
    from tests.support import graphrag_fixture

    cfg, neo4j, pid = own_neo4j
    with open_engine(make_config(neo4j)) as eng:
        eng.import_graphrag(graphrag_fixture.write(tmp_path / "graphrag"), embed=True)
    frozen = threading.Event()
    fake_llm.responder = lambda req: "Bob built engines [Data: Sources (1)]."
    fake_llm.delay = lambda req: float(frozen.wait(120)) * 0.0
    (tmp_path / "driftgraph.yaml").write_text("neo4j:\n  query_timeout_s: 3\nllm:\n  max_retries: 0\n")
    env = {**os.environ, "NEO4J_URI": neo4j["uri"], "NEO4J_PASSWORD": neo4j["password"]}
    env |= {"OPENAI_BASE_URL": fake_llm.base_url, "OPENAI_API_KEY": "test"}
    args = [sys.executable, "-m", "driftgraph", "query", "basic", "What did Bob build?"]
    proc = subprocess.Popen(args, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        while not fake_llm.chat_requests() and proc.poll() is None:
            time.sleep(0.05)
        assert fake_llm.chat_requests(), "the query ended before it asked the model"
        os.kill(pid, signal.SIGSTOP)
        stopped_at = time.monotonic()
        frozen.set()
        out, err = proc.communicate(timeout=120)
        took = time.monotonic() - stopped_at
    finally:
        os.kill(pid, signal.SIGCONT)
        fake_llm.delay = lambda req: 0.0
    assert proc.returncode != 0, out
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "neo4j.query_timeout_s=3s" in lines[0] and "frozen" in lines[0] and neo4j["uri"] in lines[0], lines[0]
    assert took < 3 + 1 + 20, f"the question waited {took:.0f}s for a frozen server"


@pytest.fixture
def own_neo4j(tmp_path: Path) -> Iterator[tuple[Any, dict[str, str], int]]:
    """A launcher Neo4j of this test's own (it gets frozen): never the session database."""
    from driftgraph import launcher
    from driftgraph.config import LauncherConfig
    from tests.support.serve import free_port

    cfg = LauncherConfig(
        port=free_port(), http_port=0, data_dir=str(tmp_path / "n4j"), heap="512m", page_cache="64m",
        start_timeout_s=900,
    )  # fmt: skip
    password = "deadline-neo4j-pw"
    st = launcher.start(cfg, password)
    assert st.pid is not None
    try:
        yield cfg, {"uri": st.uri, "username": "neo4j", "password": password, "database": "neo4j"}, st.pid
    finally:
        os.kill(st.pid, signal.SIGCONT)
        launcher.stop(cfg)
