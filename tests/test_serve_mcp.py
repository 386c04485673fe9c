"""The MCP server through the official `mcp` SDK's client: `driftgraph mcp` over stdio and `driftgraph serve --mcp`
over streamable HTTP, operation-dulce in a real Neo4j and the fake LLM behind both."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from tests.support.fake_openai import FakeOpenAI
from tests.support.serve import Server, metric, metric_samples, serve_env, write_config

QUESTION = "Who leads the team at Dulce base?"
TOOLS = {"local_search", "drift_search", "global_search", "basic_search", "get_retrieval", "retrieval_cypher"}


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI().start()
    yield server
    server.stop()


def _structured(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    data = result.structured_content
    if data is None:
        data = json.loads(result.content[0].text)
    return data.get("result", data) if isinstance(data, dict) and set(data) == {"result"} else data


async def _exercise(target: Any) -> dict[str, Any]:
    """List the tools, search twice, read the trace back; returns what the assertions need."""
    async with Client(target, read_timeout_seconds=180) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        local = _structured(await client.call_tool("local_search", {"question": QUESTION, "context_only": True}))
        basic = _structured(await client.call_tool("basic_search", {"question": QUESTION}))
        trace = _structured(await client.call_tool("get_retrieval", {"retrieval_id": local["retrieval_id"]}))
        cypher = await client.call_tool("retrieval_cypher", {"retrieval_id": local["retrieval_id"]})
        missing = await client.call_tool("get_retrieval", {"retrieval_id": "no-such-id"})
        bad = await client.call_tool("local_search", {"question": QUESTION, "budget": 0})
        return {
            "tools": tools,
            "local": local,
            "basic": basic,
            "trace": trace,
            "cypher": cypher,
            "missing": missing,
            "bad": bad,
        }


def _check(out: dict[str, Any]) -> None:
    assert set(out["tools"]) >= TOOLS
    schema = out["tools"]["local_search"].input_schema["properties"]
    assert {"question", "budget", "route", "context_only"} <= set(schema)
    local, basic = out["local"], out["basic"]
    assert local["answer"] is None and local["retrieval_id"]
    account = local["account"]
    assert account["items_in"] > 0 and account["budget"] > 0 and account["stop_reason"] == "context_only"
    assert set(account["cost"]) >= {"llm_calls", "prompt_tokens", "completion_tokens"}
    assert basic["answer"] == "fake answer" and basic["account"]["cost"]["llm_calls"] >= 1
    assert out["trace"]["retrieval"]["id"] == local["retrieval_id"]
    assert local["retrieval_id"] in out["cypher"].content[0].text
    assert out["missing"].is_error and "no-such-id" in out["missing"].content[0].text
    assert out["bad"].is_error and "budget" in out["bad"].content[0].text


def test_mcp_over_stdio(dulce: dict, fake: FakeOpenAI, tmp_path: Path) -> None:
    write_config(tmp_path)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "driftgraph", "mcp"], env=serve_env(dulce, fake), cwd=tmp_path
    )
    _check(anyio.run(_exercise, params))


def test_mcp_over_streamable_http(dulce: dict, fake: FakeOpenAI, tmp_path: Path) -> None:
    write_config(tmp_path)
    srv = Server(tmp_path, serve_env(dulce, fake), "--mcp").wait_ready()
    try:
        _check(anyio.run(_exercise, f"{srv.url}/mcp"))
        # the tools' questions count under interface "mcp"; the bad budget never reached the engine
        samples = metric_samples(srv.url)
        assert metric(samples, "driftgraph_queries_total", mode="local", interface="mcp", outcome="context_only") == 1
        assert metric(samples, "driftgraph_queries_total", mode="basic", interface="mcp", outcome="answered") == 1
    finally:
        srv.stop()
