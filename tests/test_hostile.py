"""A hostile client against `driftgraph serve` (issue 36): a rebinding-style ``Host`` is refused on every route,
made-up methods add no metric series, and no interface lets a request raise the server's cost caps (HTTP and
the real ``mcp`` client against the same served app, operation-dulce in a real Neo4j, the fake LLM behind it)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anyio
import httpx2 as httpx
import pytest
from mcp import Client

from driftgraph.config import Config
from driftgraph.serve.guard import host_name, served_hosts
from tests.support.fake_openai import FakeOpenAI
from tests.support.serve import Server, metric_samples, serve_env, write_config
from tests.test_serve_http import QUESTION
from tests.test_serve_http import responder as dulce_responder

pytestmark = pytest.mark.neo4j
DRIFT_CAPS = {"max_llm_calls": 12, "max_depth": 1, "max_prompt_tokens": 50_000}


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI(dulce_responder).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def server(dulce: dict, fake: FakeOpenAI, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    cwd = tmp_path_factory.mktemp("hostile")
    write_config(cwd, {"allowed_hosts": ["driftgraph.internal"]}, drift=DRIFT_CAPS, local={"context_cap": 3000})
    srv = Server(cwd, serve_env(dulce, fake), "--mcp").wait_ready()
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def stored_id(server: Server) -> str:
    res = httpx.post(f"{server.url}/v1/query/local", json={"question": QUESTION, "context_only": True}, timeout=120)
    assert res.status_code == 200, res.text
    return str(res.json()["retrieval_id"])


def test_host_names_parsed_and_served() -> None:
    assert host_name("LocalHost:8765") == "localhost" and host_name("[::1]:80") == "[::1]"
    assert host_name("127.0.0.1") == "127.0.0.1" and host_name("evil.example:8765") == "evil.example"
    assert served_hosts("127.0.0.1", []) == {"127.0.0.1", "localhost", "[::1]"}
    assert "10.0.0.5" in served_hosts("10.0.0.5", []) and "api.example" in served_hosts("0.0.0.0", ["api.example:443"])
    assert "0.0.0.0" not in served_hosts("0.0.0.0", [])
    assert Config.model_fields["serve"].annotation.model_fields["allowed_hosts"].description  # type: ignore[union-attr]


def _routes(stored_id: str) -> list[tuple[str, str, Any]]:
    body = {"question": QUESTION, "context_only": True}
    return [
        ("GET", "/v1/retrievals", None),
        ("GET", f"/v1/retrievals/{stored_id}", None),
        ("GET", f"/v1/retrievals/{stored_id}/cypher", None),
        ("GET", "/retrievals", None),
        ("GET", f"/retrievals/{stored_id}", None),
        ("POST", "/v1/query/local", body),
        ("POST", "/v1/query/basic", body),
        ("POST", "/v1/query/drift", {"question": QUESTION}),
        ("POST", "/v1/query/global", {"question": QUESTION}),
        ("POST", "/v1/chat/completions", {"model": "driftgraph-local", "messages": [{"role": "user", "content": "x"}]}),
        ("GET", "/v1/models", None),
        ("GET", "/metrics", None),
        ("GET", "/healthz", None),
        ("GET", "/readyz", None),
        ("GET", "/docs", None),
        ("GET", "/openapi.json", None),
        ("POST", "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "ping"}),
        ("GET", "/no-such-route", None),
    ]


def test_a_foreign_host_is_refused_on_every_route(server: Server, stored_id: str) -> None:
    before = httpx.get(f"{server.url}/v1/retrievals", timeout=60).json()
    for method, path, body in _routes(stored_id):
        for host in ("evil.example", f"evil.example:{server.port}", "127.0.0.1.evil.example", "localhost.evil"):
            res = httpx.request(method, server.url + path, json=body, headers={"Host": host}, timeout=60)
            assert res.status_code == 421, (method, path, host, res.status_code, res.text[:200])
            error = res.json()["error"]
            assert error["code"] == "host" and "serve.allowed_hosts" in error["message"], error
    after = httpx.get(f"{server.url}/v1/retrievals", timeout=60).json()
    assert after == before, "a refused question stores nothing"


def test_loopback_names_and_configured_hosts_are_served(server: Server, stored_id: str) -> None:
    for host in (f"127.0.0.1:{server.port}", f"localhost:{server.port}", f"[::1]:{server.port}", "driftgraph.internal"):
        for path in ("/healthz", f"/v1/retrievals/{stored_id}", "/retrievals"):
            res = httpx.get(server.url + path, headers={"Host": host}, timeout=60)
            assert res.status_code == 200, (host, path, res.status_code, res.text[:200])


def test_mcp_answers_a_configured_host_too(server: Server) -> None:
    """The MCP SDK checks Host on its own; it is told the names the server serves, so a name in
    ``serve.allowed_hosts`` reaches the tools (and a foreign one is still 421, above)."""
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    headers = {"Accept": "application/json, text/event-stream"}
    for host in ("driftgraph.internal", f"localhost:{server.port}"):
        res = httpx.post(f"{server.url}/mcp", json=init, headers={**headers, "Host": host}, timeout=60)
        assert res.status_code == 200, (host, res.status_code, res.text[:200])
        assert "driftgraph" in res.text, "the initialize result names the server"


def test_a_post_that_is_not_json_is_refused(server: Server) -> None:
    """What a page on another origin can POST without a CORS preflight: a form or plain text, never JSON."""
    before = httpx.get(f"{server.url}/v1/retrievals", timeout=60).json()
    question = json.dumps({"question": QUESTION, "context_only": True})
    for content_type, content in (
        ("application/x-www-form-urlencoded", f"question={QUESTION}"),
        ("text/plain", question),
        ("multipart/form-data; boundary=x", "--x--"),
        (None, question),
    ):
        headers = {"content-type": content_type} if content_type else {}
        for path in ("/v1/query/local", "/v1/chat/completions", "/mcp"):
            res = httpx.post(server.url + path, content=content, headers=headers, timeout=60)
            assert res.status_code == 415, (path, content_type, res.status_code, res.text[:200])
            assert res.json()["error"]["code"] == "content-type"
    assert httpx.get(f"{server.url}/v1/retrievals", timeout=60).json() == before
    ok = httpx.post(
        f"{server.url}/v1/query/local",
        content=question,
        headers={"content-type": "application/json; charset=utf-8"},
        timeout=120,
    )
    assert ok.status_code == 200, ok.text


def _method_series(url: str) -> set[tuple[str, frozenset]]:
    return {k for k in metric_samples(url) if k[0].startswith("driftgraph_http_request")}


def test_made_up_methods_add_no_metric_series(server: Server) -> None:
    httpx.request("BREW", f"{server.url}/healthz", timeout=30)  # the first unknown method makes the "other" series
    _method_series(server.url)  # and the first scrape its own
    before = _method_series(server.url)
    for i in range(25):
        res = httpx.request(f"X{i:02d}MADEUP", f"{server.url}/healthz", timeout=30)
        assert res.status_code == 405
    after = _method_series(server.url)
    assert after == before, sorted(after - before)
    methods = {dict(labels).get("method") for _, labels in after} - {None}
    assert "other" in methods and methods <= {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "other"}


def _error(res: httpx.Response) -> dict[str, Any]:
    assert res.status_code == 422, (res.status_code, res.text[:300])
    error: dict[str, Any] = res.json()["error"]
    return error


@pytest.mark.parametrize("stream", [False, True])
def test_http_cannot_raise_a_cap(server: Server, fake: FakeOpenAI, stream: bool) -> None:
    fake.requests.clear()
    for field, cap in DRIFT_CAPS.items():
        body = {"question": QUESTION, field: cap + 1, "stream": stream}
        error = _error(httpx.post(f"{server.url}/v1/query/drift", json=body, timeout=60))
        assert error["code"] == field and f"drift.{field}" in error["message"] and str(cap) in error["message"]
    body = {"question": QUESTION, "context_only": True, "budget": 3001, "stream": stream}
    error = _error(httpx.post(f"{server.url}/v1/query/local", json=body, timeout=60))
    assert error["code"] == "budget" and "local.context_cap" in error["message"] and "3000" in error["message"]
    assert not fake.chat_requests(), "a refused request reaches no model"


def test_http_may_lower_a_cap(server: Server) -> None:
    body = {"question": QUESTION, "max_llm_calls": 6, "max_depth": 0, "seed": 1}
    res = httpx.post(f"{server.url}/v1/query/drift", json=body, timeout=300)
    assert res.status_code == 200, res.text
    assert res.json()["cost"]["llm_calls"] <= 6
    body = {"question": QUESTION, "context_only": True, "budget": 3000}
    res = httpx.post(f"{server.url}/v1/query/local", json=body, timeout=120)
    assert res.status_code == 200 and res.json()["context"]["budget"] <= 3000, res.text


async def _mcp_calls(url: str) -> tuple[Any, Any, Any]:
    async with Client(url, read_timeout_seconds=180) as client:
        raised = await client.call_tool("drift_search", {"question": QUESTION, "max_llm_calls": 13})
        deeper = await client.call_tool("drift_search", {"question": QUESTION, "max_depth": 2})
        budget = await client.call_tool("local_search", {"question": QUESTION, "context_only": True, "budget": 3001})
        return raised, deeper, budget


def test_mcp_cannot_raise_a_cap_either(server: Server, fake: FakeOpenAI) -> None:
    fake.requests.clear()
    raised, deeper, budget = anyio.run(_mcp_calls, f"{server.url}/mcp")
    for result, words in (
        (raised, ("max_llm_calls=13", "12", "drift.max_llm_calls")),
        (deeper, ("max_depth=2", "drift.max_depth")),
        (budget, ("budget=3001", "3000", "local.context_cap")),
    ):
        assert result.is_error, result
        text = json.dumps([c.model_dump() for c in result.content])
        assert all(w in text for w in words), text
    assert not fake.chat_requests(), "a refused tool call reaches no model"
