"""`driftgraph serve` as a user runs it: a subprocess over operation-dulce in a real Neo4j, the fake LLM behind it,
the real `openai` client (models, chat, stream) and plain HTTP (query routes, SSE, retrievals, bad bodies,
16 concurrent questions)."""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx2 as httpx
import openai
import pytest

from driftgraph.store.db import Store
from tests.conftest import make_config
from tests.support.drift_fakes import DULCE_LAYERS, request_kind, tree_responder
from tests.support.fake_openai import FakeOpenAI
from tests.support.global_fake import responder as global_responder
from tests.support.global_fake import schema_name
from tests.support.serve import Server, serve_env, write_config

QUESTION = "What is Operation: Dulce and who leads the team at Dulce base?"
ANSWER = "Operation Dulce is a mission [Data: Sources (1)]."
MARKER = "earlier-turn-marker-7731"


DRIFT = tree_responder(layers=DULCE_LAYERS, max_level=1)


def responder(req: dict[str, Any]) -> str:
    """Local's rewrite and route, DRIFT's HyDE, primer and steps, global's ratings and key points; every
    answer (local, basic, DRIFT's and global's reduce) is ANSWER."""
    text = "\n".join(str(m.get("content") or "") for m in req["messages"])
    if "Standalone question:" in text:
        return "Who leads the team at Dulce base?"
    if "Classify the shape of a question" in text:
        return json.dumps({"shape": "fact"})
    name = schema_name(req)
    if name in ("report_ratings", "key_points"):
        return global_responder(req)
    if name in ("drift_primer", "drift_step") or request_kind(req) == "hyde":
        return DRIFT(req)
    return ANSWER


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI(responder).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def server(dulce: dict, fake: FakeOpenAI, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    cwd = tmp_path_factory.mktemp("serve")
    write_config(cwd, {"max_concurrency": 16, "max_body_bytes": 4096, "metrics": False})
    srv = Server(cwd, serve_env(dulce, fake)).wait_ready()
    yield srv
    assert srv.stop() in (0, -signal.SIGTERM), srv.output()  # uvicorn re-raises the signal it handled
    assert "Application shutdown complete" in srv.output()


@pytest.fixture
def client(server: Server) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{server.url}/v1", api_key="unused", max_retries=0)


def _stored(neo4j: dict, rid: str) -> bool:
    with Store(make_config(neo4j).neo4j) as store:
        return bool(store.read("trace/read", id=rid))


def test_models_lists_the_four_modes(client: openai.OpenAI) -> None:
    ids = [m.id for m in client.models.list()]
    assert ids == ["driftgraph-local", "driftgraph-drift", "driftgraph-global", "driftgraph-basic"]


def test_chat_completion_id_is_the_stored_retrieval_and_history_reaches_the_model(client, server, dulce, fake):
    fake.requests.clear()
    reply = client.chat.completions.create(
        model="driftgraph-local",
        messages=[
            {"role": "user", "content": f"Tell me about the base ({MARKER})."},
            {"role": "assistant", "content": "It is in New Mexico."},
            {"role": "user", "content": QUESTION},
        ],
        temperature=0.2,
    )
    assert reply.choices[0].message.content == ANSWER
    assert reply.usage is not None and reply.usage.total_tokens > 0
    assert reply.usage.total_tokens == reply.usage.prompt_tokens + reply.usage.completion_tokens
    assert _stored(dulce, reply.id)
    sent = json.dumps(fake.chat_requests())
    assert MARKER in sent, "earlier messages must reach the model as history"
    trace = httpx.get(f"{server.url}/v1/retrievals/{reply.id}").json()
    assert trace["retrieval"]["id"] == reply.id


def test_chat_stream_in_openai_format(client, dulce):
    chunks = list(
        client.chat.completions.create(
            model="driftgraph-basic", messages=[{"role": "user", "content": QUESTION}], stream=True
        )
    )
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == ANSWER
    assert len(chunks) >= 3, "tokens arrive as separate chunks"
    last = chunks[-1]
    assert last.choices[0].finish_reason == "stop"
    assert last.usage is not None and last.usage.completion_tokens > 0
    assert _stored(dulce, last.id)


def _run_matches_usage(server: Server, rid: str, usage: Any, calls: int) -> None:
    """The completion's id is a stored retrieval whose cost is the completion's usage and the LLM calls made."""
    stored = httpx.get(f"{server.url}/v1/retrievals/{rid}", timeout=60)
    assert stored.status_code == 200, stored.text
    cost = stored.json()["retrieval"]["cost"]
    assert usage is not None and usage.prompt_tokens > 0 and usage.completion_tokens > 0
    assert (usage.prompt_tokens, usage.completion_tokens) == (cost["prompt_tokens"], cost["completion_tokens"])
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    assert cost["llm_calls"] == calls > 1, "the run's every call, not just the answer"


@pytest.mark.parametrize("model", ["driftgraph-drift", "driftgraph-global"])
def test_drift_and_global_chat_completion_id_and_usage_are_the_run(client, server, fake, model):
    fake.requests.clear()
    reply = client.chat.completions.create(
        model=model,
        messages=[
            {"role": "user", "content": f"Tell me about the base ({MARKER})."},
            {"role": "assistant", "content": "It is in New Mexico."},
            {"role": "user", "content": "Who leads the team there?"},
        ],
    )
    calls = len(fake.chat_requests())
    assert MARKER in json.dumps(fake.chat_requests()), "the follow-up is rewritten with the earlier messages"
    assert reply.model == model and reply.choices[0].finish_reason == "stop"
    assert "Operation Dulce is a mission" in (reply.choices[0].message.content or "")
    assert reply.id.startswith(model.removeprefix("driftgraph-") + "-")
    _run_matches_usage(server, reply.id, reply.usage, calls)


@pytest.mark.parametrize("model", ["driftgraph-drift", "driftgraph-global"])
def test_drift_and_global_chat_stream_ends_with_the_retrieval_id_and_usage(client, server, fake, model):
    fake.requests.clear()
    chunks = list(
        client.chat.completions.create(model=model, messages=[{"role": "user", "content": QUESTION}], stream=True)
    )
    calls = len(fake.chat_requests())
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert "Operation Dulce is a mission" in text
    last = chunks[-1]
    assert last.choices[0].finish_reason == "stop"
    assert last.id.startswith(model.removeprefix("driftgraph-") + "-")
    _run_matches_usage(server, last.id, last.usage, calls)


def test_chat_rejects_unknown_model_and_non_user_last_message(client):
    with pytest.raises(openai.BadRequestError) as err:
        client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
    assert err.value.body["code"] == "model"
    with pytest.raises(openai.BadRequestError) as err:
        client.chat.completions.create(model="driftgraph-local", messages=[{"role": "assistant", "content": "hi"}])
    assert err.value.body["code"] == "messages"


def test_query_route_returns_the_cli_envelope_and_the_trace_routes(server, dulce):
    res = httpx.post(
        f"{server.url}/v1/query/local", json={"question": QUESTION, "context_only": True, "budget": 900}, timeout=60
    )
    assert res.status_code == 200, res.text
    env = res.json()
    assert set(env) >= {"mode", "question", "answer", "retrieval_id", "context", "trace", "cost"}
    assert env["mode"] == "local" and env["answer"] is None and env["context"]["budget"] == 900
    rid = env["retrieval_id"]
    assert _stored(dulce, rid)
    listed = httpx.get(f"{server.url}/v1/retrievals", params={"limit": 50}).json()["retrievals"]
    assert rid in [r["id"] for r in listed]
    cypher = httpx.get(f"{server.url}/v1/retrievals/{rid}/cypher")
    assert cypher.status_code == 200 and rid in cypher.text and "MATCH" in cypher.text
    page = httpx.get(f"{server.url}/retrievals/{rid}", timeout=60)
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert rid in page.text and "<svg" in page.text
    index = httpx.get(f"{server.url}/retrievals")
    assert f'href="/retrievals/{rid}"' in index.text
    for path in (f"/v1/retrievals/nope-{rid}", f"/v1/retrievals/nope-{rid}/cypher", f"/retrievals/nope-{rid}"):
        missing = httpx.get(server.url + path)
        assert missing.status_code == 404, path
        assert missing.json()["error"]["type"] == "not_found"


def test_query_stream_sends_tokens_then_the_envelope(server):
    frames: list[tuple[str, str]] = []
    with httpx.stream(
        "POST", f"{server.url}/v1/query/local", json={"question": QUESTION, "stream": True}, timeout=60
    ) as res:
        assert res.status_code == 200 and res.headers["content-type"].startswith("text/event-stream")
        event = ""
        for line in res.iter_lines():
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: "):
                frames.append((event, line[6:]))
    tokens = [json.loads(d)["text"] for e, d in frames if e == "token"]
    assert "".join(tokens) == ANSWER and len(tokens) > 1
    assert frames[-1][0] == "result"
    assert json.loads(frames[-1][1])["answer"] == ANSWER


@pytest.mark.parametrize(
    ("path", "body", "code"),
    [
        ("/v1/query/local", {"question": QUESTION, "budget": 0}, "budget"),
        ("/v1/query/local", {"question": QUESTION, "bogus": 1}, "bogus"),
        ("/v1/query/local", {"question": "   "}, "question"),
        ("/v1/query/local", {}, "question"),
        ("/v1/query/local", {"question": QUESTION, "history": [{"role": "robot", "content": "x"}]}, "history.0.role"),
        ("/v1/query/local", {"question": QUESTION, "route": "sideways"}, "route"),
        ("/v1/query/drift", {"question": QUESTION, "max_llm_calls": 0}, "max_llm_calls"),
        ("/v1/query/global", {"question": QUESTION, "level": -1}, "level"),
        ("/v1/chat/completions", {"model": "driftgraph-local", "messages": []}, "messages"),
    ],
)
def test_bad_body_is_400_naming_the_field(server, path, body, code):
    res = httpx.post(server.url + path, json=body, timeout=60)
    assert res.status_code == 400, res.text
    err = res.json()["error"]
    assert err["code"] == code and err["type"] == "invalid_request_error"
    assert err["message"]


def test_malformed_json_oversized_body_and_unknown_route(server):
    res = httpx.post(f"{server.url}/v1/query/local", content=b"{not json", headers={"content-type": "application/json"})
    assert res.status_code == 400 and res.json()["error"]["code"] == "body"
    res = httpx.post(f"{server.url}/v1/query/local", json={"question": "x" * 5000})
    assert res.status_code == 413 and "max_body_bytes" in res.json()["error"]["message"]
    res = httpx.get(f"{server.url}/v1/retrievals", params={"limit": 0})
    assert res.status_code == 400 and res.json()["error"]["code"] == "limit"
    res = httpx.post(f"{server.url}/v1/query/sideways", json={"question": QUESTION})
    assert res.status_code == 404 and "error" in res.json()


def test_sixteen_concurrent_questions_get_distinct_stored_ids(server, dulce, fake):
    """Budgets from 300 to 4800 tokens: a chunk one question includes another drops, so the traces written at
    the same moment link the same nodes with different edges (the shape that deadlocked trace writes)."""
    fake.delay = lambda req: 0.2  # every answer call overlaps the others
    try:

        def ask(i: int) -> httpx.Response:
            body = {"question": f"{QUESTION} ({i})", "budget": 300 + 300 * i}
            return httpx.post(f"{server.url}/v1/query/local", json=body, timeout=300)

        with ThreadPoolExecutor(16) as pool:
            responses = list(pool.map(ask, range(16)))
    finally:
        fake.delay = lambda req: 0.0
    assert [r.status_code for r in responses] == [200] * 16, [r.text[:300] for r in responses if r.status_code != 200]
    envelopes = [r.json() for r in responses]
    ids = [env["retrieval_id"] for env in envelopes]
    assert len(set(ids)) == 16
    assert all(env["question"].endswith(f"({i})") for i, env in enumerate(envelopes))
    verdicts = set()
    for env in envelopes:
        stored = httpx.get(f"{server.url}/v1/retrievals/{env['retrieval_id']}", timeout=60).json()
        edges = {(e["edge"], e["item_id"]) for e in stored["edges"] if e["source"] == "chunk"}
        sent = {(i["status"].upper(), i["id"]) for i in env["trace"]["items"] if i["source"] == "chunk"}
        assert edges == sent, "the stored trace is the answered one, every chunk edge present"
        verdicts |= edges
    both = {item for kind, item in verdicts if kind == "INCLUDED"} & {i for k, i in verdicts if k == "DROPPED"}
    assert both, "some chunk is included by one question and dropped by another (the contended case)"
    assert "DeadlockDetected" not in server.output() and "ResultFailedError" not in server.output()


def test_healthz_readyz_and_openapi(server):
    assert httpx.get(f"{server.url}/healthz").json() == {"status": "ok"}
    ready = httpx.get(f"{server.url}/readyz")
    assert ready.status_code == 200 and ready.json()["status"] == "ready"
    spec = httpx.get(f"{server.url}/openapi.json").json()
    schema = spec["components"]["schemas"]["LocalQueryBody"]["properties"]
    assert "Fix the context budget" in schema["budget"]["description"] and "stream" in schema


def test_cors_is_off_without_serve_cors_origins(server):
    origin = {"Origin": "http://chat-ui.example"}
    preflight = httpx.options(
        f"{server.url}/v1/query/local", headers={**origin, "Access-Control-Request-Method": "POST"}
    )
    assert "access-control-allow-origin" not in preflight.headers
    res = httpx.get(f"{server.url}/v1/models", headers=origin)
    assert res.status_code == 200 and "access-control-allow-origin" not in res.headers


def test_no_metrics_route_with_serve_metrics_false(server):
    """serve.metrics is on by default (tests/test_serve_ops.py reads it); this server turned it off."""
    res = httpx.get(f"{server.url}/metrics")
    assert res.status_code == 404 and "driftgraph_" not in res.text


def test_upstream_llm_failure_is_502_with_its_status(server, fake):
    fake.fail_next = [401]
    res = httpx.post(f"{server.url}/v1/query/local", json={"question": QUESTION}, timeout=60)
    fake.fail_next = []
    assert res.status_code == 502, res.text
    err = res.json()["error"]
    assert err["type"] == "upstream_llm_error" and err["code"] == 401


def test_cli_refuses_a_public_host_without_a_key(tmp_path: Path, dulce, fake):
    import subprocess
    import sys

    write_config(tmp_path)
    res = subprocess.run(
        [sys.executable, "-m", "driftgraph", "serve", "--host", "0.0.0.0"],
        cwd=tmp_path,
        env=serve_env(dulce, fake),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert res.returncode == 1
    assert res.stderr.strip().count("\n") == 0 and "DRIFTGRAPH_API_KEY" in res.stderr


def test_a_port_in_use_is_one_line_before_anything_starts_and_port_0_names_the_one_it_picked(tmp_path: Path, fake):
    """The socket is bound before the engine opens: a busy port exits 1 with one line naming the fix (uvicorn
    alone logged its error after starting the app and exited 3), and Neo4j is never needed for that. With
    ``--port 0`` the start line names the port picked, and that port answers."""
    import socket
    import subprocess
    import sys

    from tests.support.serve import free_port

    write_config(tmp_path)
    nowhere = {"uri": f"bolt://127.0.0.1:{free_port()}", "password": "unused"}
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        busy = held.getsockname()[1]
        res = subprocess.run(
            [sys.executable, "-m", "driftgraph", "serve", "--port", str(busy)],
            cwd=tmp_path,
            env=serve_env(nowhere, fake),
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert res.returncode == 1, res.stderr
    line = res.stderr.strip()
    assert line.count("\n") == 0 and f"127.0.0.1:{busy}" in line and "--port" in line, line
    assert "Started server process" not in res.stderr

    proc = subprocess.Popen(
        [sys.executable, "-m", "driftgraph", "serve", "--port", "0"],
        cwd=tmp_path,
        env=serve_env(nowhere, fake),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        started = ""
        for _ in range(50):
            started = proc.stderr.readline()
            if "serving on" in started or not started:
                break
        assert "serving on http://127.0.0.1:" in started, started
        port = int(started.split("http://127.0.0.1:")[1].split()[0])
        assert port != 0
        assert httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=10).status_code == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
