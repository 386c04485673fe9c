"""One rule for secrets (issue 36): every credential in the config is marked once (``config/secrets.py``) and
masked wherever settings are shown or stored: ``config show``, the stored retrieval (Cypher, HTTP, ``trace
show``, MCP ``get_retrieval``), the answers and the server's log. Each secret gets a distinct marker; no
marker may appear anywhere."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2 as httpx
import pytest
import yaml
from mcp import Client
from pydantic import BaseModel, Field

from driftgraph.config import Config
from driftgraph.config.secrets import MASK, is_secret, mask, redact, secret_field, secret_paths
from driftgraph.store.db import Store
from tests.conftest import make_config
from tests.support.cypher import q
from tests.support.fake_openai import FakeOpenAI
from tests.support.fake_rerank import FakeRerank
from tests.support.serve import Server, serve_env
from tests.test_serve_http import QUESTION
from tests.test_serve_http import responder as dulce_responder

SECRET_NAME = re.compile(r"(^|_)(api_?key|key|keys|password|passwd|token|secret|secrets|credentials?)($|_)")
RERANK_KEYS = ("local.rerank.api_key", "basic.rerank.api_key", "drift.local.rerank.api_key")


def _fields(model: type[BaseModel], prefix: str = "") -> Iterator[tuple[str, Any]]:
    for name, f in model.model_fields.items():
        ann = f.annotation
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            yield from _fields(ann, f"{prefix}{f.alias or name}.")
        else:
            yield prefix + (f.alias or name), f


def unmarked_secrets(model: type[BaseModel]) -> list[str]:
    """Fields whose name says credential but that are not declared with ``secret_field``."""
    return [p for p, f in _fields(model) if SECRET_NAME.search(p.rsplit(".", 1)[-1]) and not is_secret(f)]


def test_every_field_named_like_a_secret_is_marked() -> None:
    assert unmarked_secrets(Config) == []
    paths = set(secret_paths())
    assert {"neo4j.password", "llm.api_key", *RERANK_KEYS} <= paths, paths


def test_the_check_finds_an_unmarked_secret() -> None:
    class Section(BaseModel):
        api_key: str | None = Field(None, description="forgot the mark")
        max_tokens: int = Field(1, description="a count, not a credential")
        password: str = secret_field("x", description="marked")

    class Top(BaseModel):
        service: Section = Field(Section(), description="a section")

    assert unmarked_secrets(Top) == ["service.api_key"]


def test_mask_and_redact_leave_the_input_alone() -> None:
    data = Config().to_dict()
    data["local"]["rerank"]["api_key"] = "k-1"
    masked = mask(data)
    assert masked["local"]["rerank"]["api_key"] == MASK and data["local"]["rerank"]["api_key"] == "k-1"
    assert masked["basic"]["rerank"]["api_key"] is None, "an unset secret stays unset"
    nested = {"local": {"rerank": {"api_key": "k-2", "top_n": 3}}, "list": [{"password": "p"}]}
    assert redact(nested) == {"local": {"rerank": {"api_key": MASK, "top_n": 3}}, "list": [{"password": MASK}]}
    assert nested["local"]["rerank"]["api_key"] == "k-2"


def _markers() -> dict[str, str]:
    """A distinct marker per secret path (long enough to pass Neo4j's 8-character password minimum)."""
    return {path: f"secret-marker-{i}-{path.replace('.', '-')}" for i, path in enumerate(secret_paths())}


def _merge(into: dict[str, Any], more: dict[str, Any]) -> None:
    for key, value in more.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value


def _config_file(cwd: Path, markers: dict[str, str], **extra: dict[str, Any]) -> dict[str, Any]:
    data: dict[str, Any] = {"embeddings": {"threads": 1}}
    for path, value in markers.items():
        node = data
        *parents, leaf = path.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    for section, values in extra.items():
        _merge(data.setdefault(section, {}), values)
    cwd.mkdir(parents=True, exist_ok=True)
    (cwd / "driftgraph.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    return data


def test_config_show_masks_every_secret(tmp_path: Path) -> None:
    markers = _markers()
    _config_file(tmp_path, {k: v for k, v in markers.items() if k not in ("neo4j.password", "llm.api_key")})
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "OPENAI_"))}
    env.update(NEO4J_PASSWORD=markers["neo4j.password"], OPENAI_API_KEY=markers["llm.api_key"])
    for args in ([], ["--json"]):
        out = subprocess.run(
            [sys.executable, "-m", "driftgraph", "config", "show", *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert out.returncode == 0, out.stderr
        leaked = [m for m in markers.values() if m in out.stdout + out.stderr]
        assert not leaked, leaked
        shown = json.loads(out.stdout) if args else yaml.safe_load(out.stdout)
        for path in markers:
            node: Any = shown
            for part in path.split("."):
                node = node[part]
            assert node == MASK, (path, node)


# -- a served app: every mode with every rerank key set, then every way a retrieval can be read -----------------


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI(dulce_responder).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def rerank() -> Iterator[FakeRerank]:
    with FakeRerank() as server:
        yield server


async def _mcp_retrievals(url: str, ids: list[str]) -> list[str]:
    """``get_retrieval`` through the real MCP client, as an agent reads a trace."""
    out = []
    async with Client(url, read_timeout_seconds=120) as client:
        for rid in ids:
            result = await client.call_tool("get_retrieval", {"retrieval_id": rid})
            assert not result.is_error, result.content
            out.append(json.dumps([c.model_dump() for c in result.content]) + json.dumps(result.structured_content))
    return out


@pytest.mark.neo4j
def test_no_retrieval_stores_or_serves_a_secret(
    dulce: dict, fake: FakeOpenAI, rerank: FakeRerank, tmp_path: Path
) -> None:
    markers = {k: v for k, v in _markers().items() if k != "neo4j.password"}  # the test database has its own
    reranker = {"provider": "endpoint", "base_url": rerank.base_url}
    _config_file(
        tmp_path,
        {k: v for k, v in markers.items() if k != "llm.api_key"},
        llm={"max_retries": 0},
        local={"rerank": reranker},
        basic={"rerank": reranker},
        drift={"local": {"rerank": reranker}},
    )
    env = serve_env(dulce, fake)
    env["OPENAI_API_KEY"] = markers["llm.api_key"]
    srv = Server(tmp_path, env, "--mcp").wait_ready()
    seen: list[str] = []
    try:
        ids = []
        for mode, body in (
            ("local", {"question": QUESTION, "context_only": True}),
            ("basic", {"question": QUESTION}),
            ("drift", {"question": QUESTION, "seed": 1}),
        ):
            res = httpx.post(f"{srv.url}/v1/query/{mode}", json=body, timeout=300)
            assert res.status_code == 200, res.text
            seen.append(res.text)
            ids.append(res.json()["retrieval_id"])
        # the keys were live: the reranker and the chat endpoint got them
        sent = {r["auth"] for r in rerank.requests}
        assert {f"Bearer {markers[k]}" for k in ("local.rerank.api_key", "basic.rerank.api_key")} <= sent, sent
        for rid in ids:
            res = httpx.get(f"{srv.url}/v1/retrievals/{rid}", timeout=60)
            assert res.status_code == 200, res.text
            seen.append(res.text)
            params = res.json()["retrieval"]["params"]
            if rid in ids[:2]:  # local and basic keep their whole settings (DRIFT keeps its own section's)
                assert MASK in json.dumps(params), "the settings are kept, the key masked"
            seen.append(httpx.get(f"{srv.url}/retrievals/{rid}", timeout=60).text)
        seen.append(httpx.get(f"{srv.url}/v1/retrievals", timeout=60).text)
        seen += anyio.run(_mcp_retrievals, f"{srv.url}/mcp", ids)
        cli_env = {**env, "NEO4J_URI": dulce["uri"], "NEO4J_PASSWORD": dulce["password"]}
        shown = subprocess.run(
            [sys.executable, "-m", "driftgraph", "trace", "show", ids[0], "--json"],
            cwd=tmp_path,
            env=cli_env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert shown.returncode == 0, shown.stderr
        seen += [shown.stdout, shown.stderr]
    finally:
        srv.stop()
    seen.append(srv.output())
    with Store(make_config(dulce).neo4j) as store:
        rows = q(
            store,
            "MATCH (n) WHERE NOT n:__Entity__ AND NOT n:Chunk RETURN labels(n) AS l, properties(n) AS p "
            "UNION ALL MATCH ()-[r]->() RETURN [type(r)] AS l, properties(r) AS p",
        )
    seen.append(json.dumps(rows, default=str))
    text = "\n".join(seen)
    leaked = [path for path, m in markers.items() if m in text]
    assert not leaked, f"secrets found in served or stored retrievals: {leaked}"
