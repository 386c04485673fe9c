"""`driftgraph serve` under pressure: the API key (401, never logged), a stalled body (408) or stalled headers
(closed), the busy gate (429 + Retry-After), Neo4j down (503), and SIGTERM with a question in flight (it finishes
and its trace is stored)."""

from __future__ import annotations

import json
import signal
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2 as httpx
import openai
import pytest

from driftgraph.store.db import Store
from tests.conftest import make_config
from tests.support.fake_openai import FakeOpenAI
from tests.support.serve import Server, free_port, metric, metric_samples, serve_env, write_config

KEY = "sk-driftgraph-test-0f3a9c"
OLD_KEY = "sk-driftgraph-test-retiring-77d1"  # served beside KEY: a rotation in progress
QUESTION = "Who leads the team at Dulce base?"
ORIGIN = "http://chat-ui.example"


def _stored(neo4j: dict, rid: str) -> bool:
    with Store(make_config(neo4j).neo4j) as store:
        return bool(store.read("trace/read", id=rid))


def _wait_for_chat(fake: FakeOpenAI, seen: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while len(fake.chat_requests()) <= seen:
        assert time.monotonic() < deadline, "the question never reached the LLM"
        time.sleep(0.05)


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI().start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def keyed(dulce: dict, fake: FakeOpenAI, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    cwd = tmp_path_factory.mktemp("keyed")
    write_config(
        cwd,
        {
            "max_concurrency": 1,
            "retry_after_s": 7,
            "request_timeout_s": 15,
            "body_timeout_s": 2,
            "header_timeout_s": 2,
            "cors_origins": [ORIGIN],
        },
    )
    srv = Server(cwd, serve_env(dulce, fake, api_key=f"{OLD_KEY}, {KEY}"), "--mcp").wait_ready()
    yield srv
    srv.stop()


def test_key_required_on_v1_mcp_and_pages_not_on_health(keyed: Server) -> None:
    assert httpx.get(f"{keyed.url}/healthz").status_code == 200
    for path in ("/v1/models", "/v1/retrievals", "/retrievals", "/mcp"):
        res = httpx.get(keyed.url + path)
        assert res.status_code == 401, path
        assert res.headers["www-authenticate"] == "Bearer"
        assert res.json()["error"]["type"] == "authentication_error"
    res = httpx.post(f"{keyed.url}/v1/query/local", json={"question": QUESTION}, headers={"Authorization": "Bearer x"})
    assert res.status_code == 401
    wrong = openai.OpenAI(base_url=f"{keyed.url}/v1", api_key=KEY + "x", max_retries=0)
    with pytest.raises(openai.AuthenticationError):
        wrong.models.list()
    right = openai.OpenAI(base_url=f"{keyed.url}/v1", api_key=KEY, max_retries=0)
    assert "driftgraph-local" in [m.id for m in right.models.list()]
    retiring = openai.OpenAI(base_url=f"{keyed.url}/v1", api_key=OLD_KEY, max_retries=0)
    assert "driftgraph-local" in [m.id for m in retiring.models.list()], "both keys of a rotation are served"
    both = openai.OpenAI(base_url=f"{keyed.url}/v1", api_key=f"{OLD_KEY}, {KEY}", max_retries=0)
    with pytest.raises(openai.AuthenticationError):
        both.models.list()
    assert KEY not in keyed.output() and OLD_KEY not in keyed.output()


def test_metrics_count_requests_by_route_and_questions_with_what_they_spent(keyed: Server, fake: FakeOpenAI) -> None:
    assert httpx.get(f"{keyed.url}/metrics").status_code == 401, "metrics sit behind the key like /v1"
    auth = {"Authorization": f"Bearer {KEY}"}
    before = metric_samples(keyed.url, auth)
    tagged = {**auth, "X-Request-Id": "client-7f3a.42"}
    answered = httpx.post(f"{keyed.url}/v1/query/local", json={"question": QUESTION}, headers=tagged, timeout=120)
    assert answered.status_code == 200, answered.text
    assert answered.headers["x-request-id"] == "client-7f3a.42", "a client's id is echoed"
    bad = httpx.post(f"{keyed.url}/v1/query/basic", json={"question": "  "}, headers=auth, timeout=30)
    assert bad.status_code == 400
    refused = httpx.get(f"{keyed.url}/v1/models", headers={"X-Request-Id": "has spaces"})
    assert refused.status_code == 401 and len(refused.headers["x-request-id"]) == 32, "unsafe ids are replaced"
    rid = answered.json()["retrieval_id"]
    assert httpx.get(f"{keyed.url}/v1/retrievals/{rid}", headers=auth, timeout=30).status_code == 200
    assert httpx.get(f"{keyed.url}/no/such/path/{rid}", headers=auth).status_code == 404
    right = openai.OpenAI(base_url=f"{keyed.url}/v1", api_key=KEY, max_retries=0)
    right.chat.completions.create(model="driftgraph-basic", messages=[{"role": "user", "content": QUESTION}])
    fake.fail_next = [401]
    failed = httpx.post(f"{keyed.url}/v1/query/local", json={"question": QUESTION}, headers=auth, timeout=120)
    assert failed.status_code == 502, failed.text
    after = metric_samples(keyed.url, auth)

    def delta(name: str, **labels: str) -> float:
        return metric(after, name, **labels) - metric(before, name, **labels)

    requests = "driftgraph_http_requests_total"
    assert delta(requests, route="/v1/query/local", method="POST", status="200") == 1
    assert delta(requests, route="/v1/query/basic", method="POST", status="400") == 1
    assert delta(requests, route="/v1/models", method="GET", status="401") == 1
    assert delta(requests, route="/v1/retrievals/{retrieval_id}", method="GET", status="200") == 1
    assert delta(requests, route="unmatched", method="GET", status="404") == 1, "unknown paths share one label"
    assert not any(rid in str(labels) for _, labels in after), "no request value becomes a label"
    assert delta("driftgraph_http_request_duration_seconds_count", route="/v1/query/local", method="POST") == 2
    assert delta("driftgraph_queries_total", mode="local", interface="http", outcome="answered") == 1
    assert delta("driftgraph_queries_total", mode="basic", interface="openai", outcome="answered") == 1
    assert delta("driftgraph_queries_total", mode="local", interface="http", outcome="upstream_llm_error") == 1
    assert delta(requests, route="/v1/query/local", method="POST", status="502") == 1
    assert delta("driftgraph_queries_total", mode="basic", interface="http", outcome="answered") == 0, "400: never ran"
    cost = answered.json()["cost"]
    assert cost["prompt_tokens"] > 0 and cost["llm_calls"] > 0
    tokens = "driftgraph_llm_tokens_total"
    assert delta(tokens, mode="local", kind="prompt") == cost["prompt_tokens"]
    assert delta(tokens, mode="local", kind="completion") == cost["completion_tokens"]
    assert delta("driftgraph_llm_calls_total", mode="local") == cost["llm_calls"]
    assert delta("driftgraph_context_tokens_sum", mode="local") == answered.json()["context"]["tokens"]
    assert delta("driftgraph_query_duration_seconds_count", mode="local") == 2  # the failed one too
    assert metric(after, "driftgraph_questions_running") == 0 and metric(after, "driftgraph_max_concurrency") == 1
    # one log line per question, with the retrieval id to find its trace; never the question's text
    log = keyed.output()
    assert "question local via http: answered in " in log and f"retrieval {rid}, request client-7f3a.42" in log
    assert "question basic via openai: answered in " in log
    assert "question local via http failed after " in log and "upstream_llm_error" in log
    assert QUESTION not in log


def test_a_body_that_stalls_is_408_and_its_connection_closed(keyed: Server) -> None:
    """A client that declares 200 bytes, sends 10 and goes quiet gets 408 after serve.body_timeout_s (2 s here)
    and the server hangs up; it answers other requests meanwhile and after."""
    head = (
        "POST /v1/query/local HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: Bearer {KEY}\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n"
    )
    with socket.create_connection(("127.0.0.1", keyed.port), timeout=30) as sock:
        sock.sendall(head.encode() + b'{"questio')
        assert httpx.get(f"{keyed.url}/healthz").status_code == 200  # the stalled body holds nothing up
        received = b""
        while chunk := sock.recv(65536):  # b"" once the server has closed the connection
            received += chunk
    status, _, rest = received.partition(b"\r\n")
    assert status.startswith(b"HTTP/1.1 408"), received
    body = json.loads(rest.split(b"\r\n\r\n", 1)[1])
    assert body["error"]["code"] == "body" and "serve.body_timeout_s=2s" in body["error"]["message"]
    assert httpx.get(f"{keyed.url}/healthz").status_code == 200


def test_a_connection_whose_headers_stall_is_closed(keyed: Server) -> None:
    """serve.header_timeout_s (2 s here): a client that sends half a request line, or nothing, is hung up on;
    uvicorn alone keeps both open for as long as the client likes."""
    half, silent = (socket.create_connection(("127.0.0.1", keyed.port), timeout=20) for _ in range(2))
    with half, silent:
        half.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # no blank line: headers never end
        assert half.recv(65536) == b""  # closed by the server; a socket timeout here fails the test
        assert silent.recv(65536) == b""
    with httpx.Client() as client:  # a kept-alive connection serves its next request as before
        assert [client.get(f"{keyed.url}/healthz").status_code for _ in range(2)] == [200, 200]


def test_busy_server_answers_429_with_retry_after(keyed: Server, fake: FakeOpenAI) -> None:
    auth = {"Authorization": f"Bearer {KEY}"}
    fake.delay = lambda req: 3.0
    seen = len(fake.chat_requests())
    first: dict[str, Any] = {}

    def ask() -> None:
        first["res"] = httpx.post(f"{keyed.url}/v1/query/local", json={"question": QUESTION}, headers=auth, timeout=120)

    worker = threading.Thread(target=ask)
    worker.start()
    try:
        _wait_for_chat(fake, seen)
        busy = httpx.post(f"{keyed.url}/v1/query/basic", json={"question": QUESTION}, headers=auth, timeout=30)
    finally:
        worker.join()
        fake.delay = lambda req: 0.0
    assert busy.status_code == 429, busy.text
    assert busy.headers["retry-after"] == "7"
    assert busy.json()["error"]["code"] == "max_concurrency"
    assert first["res"].status_code == 200
    again = httpx.post(f"{keyed.url}/v1/query/basic", json={"question": QUESTION}, headers=auth, timeout=120)
    assert again.status_code == 200, "the slot is free again once the first question ended"


def test_a_question_over_the_time_limit_is_504_and_gives_its_slot_back(keyed: Server, fake: FakeOpenAI):
    auth = {"Authorization": f"Bearer {KEY}"}
    fake.delay = lambda req: 20.0  # serve.request_timeout_s is 15
    seen = len(fake.chat_requests())
    try:
        slow = httpx.post(f"{keyed.url}/v1/query/local", json={"question": QUESTION}, headers=auth, timeout=120)
        assert slow.status_code == 504, slow.text
        assert slow.json()["error"]["code"] == "timeout" and "request_timeout_s=15" in slow.json()["error"]["message"]
        assert len(fake.chat_requests()) > seen, "the question was running, not refused"
    finally:
        fake.delay = lambda req: 0.0
    deadline = time.monotonic() + 5  # the stopped question stores its trace, then its slot is free
    while httpx.get(f"{keyed.url}/readyz", timeout=30).json().get("running", 1):
        assert time.monotonic() < deadline, "the timed-out question still holds its slot"
        time.sleep(0.1)
    newest = httpx.get(f"{keyed.url}/v1/retrievals", params={"limit": 1}, headers=auth, timeout=30).json()
    assert newest["retrievals"][0]["stop_reason"] == "deadline"
    again = httpx.post(f"{keyed.url}/v1/query/basic", json={"question": QUESTION}, headers=auth, timeout=120)
    assert again.status_code == 200, again.text


def test_cors_only_for_the_configured_origin(keyed: Server) -> None:
    preflight = {
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization,content-type",
    }
    ok = httpx.options(f"{keyed.url}/v1/query/local", headers={"Origin": ORIGIN, **preflight})
    assert ok.status_code == 200, "a preflight carries no key and is not refused for it"
    assert ok.headers["access-control-allow-origin"] == ORIGIN
    assert "authorization" in ok.headers["access-control-allow-headers"].lower()
    other = httpx.options(f"{keyed.url}/v1/query/local", headers={"Origin": "http://elsewhere.example", **preflight})
    assert "access-control-allow-origin" not in other.headers
    res = httpx.get(f"{keyed.url}/v1/models", headers={"Origin": ORIGIN, "Authorization": f"Bearer {KEY}"})
    assert res.status_code == 200 and res.headers["access-control-allow-origin"] == ORIGIN
    res = httpx.get(
        f"{keyed.url}/v1/models", headers={"Origin": "http://elsewhere.example", "Authorization": f"Bearer {KEY}"}
    )
    assert "access-control-allow-origin" not in res.headers


def test_sigterm_lets_the_question_in_flight_finish_and_store_its_trace(
    dulce: dict, fake: FakeOpenAI, tmp_path: Path
) -> None:
    write_config(tmp_path, {"shutdown_grace_s": 60})
    srv = Server(tmp_path, serve_env(dulce, fake)).wait_ready()
    fake.delay = lambda req: 3.0
    seen = len(fake.chat_requests())
    out: dict[str, Any] = {}

    def ask() -> None:
        out["res"] = httpx.post(f"{srv.url}/v1/query/local", json={"question": QUESTION}, timeout=120)

    worker = threading.Thread(target=ask)
    worker.start()
    try:
        _wait_for_chat(fake, seen)
        srv.proc.send_signal(signal.SIGTERM)
        worker.join(120)
        code = srv.stop()
    finally:
        fake.delay = lambda req: 0.0
    res = out["res"]
    assert res.status_code == 200, res.text
    assert code in (0, -signal.SIGTERM), srv.output()
    assert _stored(dulce, res.json()["retrieval_id"])
    assert "Application shutdown complete" in srv.output()


def test_retention_deletes_old_retrievals_while_serving(dulce: dict, fake: FakeOpenAI, tmp_path: Path) -> None:
    """serve.trace_retention_days (here 3 s) with a 0.5 s interval: a stored trace is there, then gone."""
    write_config(tmp_path, {"trace_retention_days": 3 / 86400, "trace_prune_interval_s": 0.5})
    srv = Server(tmp_path, serve_env(dulce, fake)).wait_ready()
    try:
        res = httpx.post(f"{srv.url}/v1/query/local", json={"question": QUESTION, "context_only": True}, timeout=120)
        assert res.status_code == 200, res.text
        rid = res.json()["retrieval_id"]
        assert _stored(dulce, rid), "younger than the retention: kept"
        deadline = time.monotonic() + 60
        while _stored(dulce, rid):
            assert time.monotonic() < deadline, "the retrieval outlived serve.trace_retention_days"
            time.sleep(0.5)
        assert metric(metric_samples(srv.url), "driftgraph_retrievals_pruned_total") >= 1
    finally:
        srv.stop()
    assert "trace retention: deleted" in srv.output()


def test_neo4j_down_is_503_and_not_ready(tmp_path: Path, fake: FakeOpenAI) -> None:
    dead = {"uri": f"bolt://127.0.0.1:{free_port()}", "password": "x"}
    write_config(tmp_path, {"trace_retention_days": 1, "trace_prune_interval_s": 0.5})
    srv = Server(tmp_path, serve_env(dead, fake)).wait_ready()
    try:
        res = httpx.post(f"{srv.url}/v1/query/local", json={"question": QUESTION}, timeout=120)
        ready = httpx.get(f"{srv.url}/readyz", timeout=120)
        listed = httpx.get(f"{srv.url}/v1/retrievals", timeout=120)
        failures = metric(metric_samples(srv.url), "driftgraph_prune_failures_total")
    finally:
        srv.stop()
    assert failures >= 1 and "trace retention: prune failed" in srv.output(), "a failed prune is logged, not fatal"
    assert res.status_code == 503, res.text
    assert res.json()["error"] == {**res.json()["error"], "type": "store_unavailable", "code": "neo4j"}
    assert ready.status_code == 503 and ready.json()["error"]["type"] == "not_ready"
    assert listed.status_code == 503
    assert json.dumps(res.json()).count("Traceback") == 0


def test_a_config_with_another_embedder_is_not_ready_and_says_which(
    dulce: dict, tmp_path: Path, fake: FakeOpenAI
) -> None:
    """The database was imported with the offline MiniLM embedder; a server configured for an OpenAI one would
    compare 1536-d question vectors with 384-d ones: /readyz says so, naming both, before any question."""
    write_config(tmp_path, embeddings={"provider": "openai", "model": "text-embedding-3-small"})
    srv = Server(tmp_path, serve_env(dulce, fake)).wait_ready()
    try:
        ready = httpx.get(f"{srv.url}/readyz", timeout=120)
        health = httpx.get(f"{srv.url}/healthz", timeout=30)
    finally:
        srv.stop()
    assert health.status_code == 200  # the process is up; it is the database that does not fit
    assert ready.status_code == 503, ready.text
    error = ready.json()["error"]
    assert error["type"] == "not_ready"
    assert "'text-embedding-3-small' (1536-d)" in error["message"] and "(384-d)" in error["message"]
