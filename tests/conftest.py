"""Fixtures: a real Neo4j (testcontainers, else NEO4J_URI; never a silent skip in CI) and a fake LLM."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from driftgraph.config import Config, parse_config
from tests.support.fake_openai import FakeOpenAI

ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = ROOT.parent / "shared" / "data"
NEO4J_FIXTURES = {"neo4j_config", "neo4j_cfg", "store", "dulce"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if NEO4J_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.neo4j)


def _docker_engine() -> bool:
    try:
        import docker

        docker.from_env(timeout=3).ping()
        return True
    except Exception:
        return False


@pytest.fixture(scope="session")
def neo4j_config() -> Iterator[dict]:
    """Connection settings of a real Neo4j for the whole session."""
    if os.environ.get("NEO4J_URI"):
        yield {
            "uri": os.environ["NEO4J_URI"],
            "username": os.environ.get("NEO4J_USERNAME", "neo4j"),
            "password": os.environ.get("NEO4J_PASSWORD", "driftgraph"),
            "database": os.environ.get("NEO4J_DATABASE", "neo4j"),
        }
        return
    if _docker_engine():
        from testcontainers.neo4j import Neo4jContainer

        with Neo4jContainer("neo4j:5.26-community", password="driftgraph-test") as container:
            yield {
                "uri": container.get_connection_url(),
                "username": "neo4j",
                "password": "driftgraph-test",
                "database": "neo4j",
            }
        return
    message = "no Neo4j: no Docker engine answers and NEO4J_URI is not set (run `driftgraph neo4j start`)"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def make_config(neo4j: dict | None = None, **sections: dict) -> Config:
    data: dict = {"embeddings": {"threads": 1}}
    if neo4j is not None:
        data["neo4j"] = dict(neo4j)
    for key, value in sections.items():
        data.setdefault(key.rstrip("_"), {}).update(value)
    return parse_config(data, "tests")


@pytest.fixture
def neo4j_cfg(neo4j_config: dict) -> Config:
    """A Config pointing at the test Neo4j, with the database emptied of driftgraph data and indexes."""
    from driftgraph.store.db import Store

    cfg = make_config(neo4j_config)
    with Store(cfg.neo4j) as store:
        store.run_auto("admin/reset")
        store.run_script("admin/drop_schema")
    return cfg


@pytest.fixture
def store(neo4j_cfg: Config) -> Iterator:
    from driftgraph.store.db import Store

    with Store(neo4j_cfg.neo4j) as s:
        yield s


@pytest.fixture
def fake_llm() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI().start()
    try:
        yield server
    finally:
        server.stop()


def _require_shared(path: Path) -> Path:
    """Shared data is there on every dev machine and in CI: missing there is a failure, elsewhere a skip."""
    if not path.is_dir():
        message = f"shared data not found at {path}"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return path


@pytest.fixture
def shared_data() -> Path:
    return _require_shared(SHARED_DATA)


@pytest.fixture(scope="module")
def dulce(neo4j_config: dict) -> dict:
    """operation-dulce imported once per test module, with embeddings; yields the Neo4j settings."""
    from driftgraph.api import open_engine
    from driftgraph.store.db import Store

    path = _require_shared(SHARED_DATA / "operation-dulce")
    cfg = make_config(neo4j_config)
    with Store(cfg.neo4j) as store:
        store.run_auto("admin/reset")
        store.run_script("admin/drop_schema")
    with open_engine(cfg) as eng:
        eng.import_graphrag(path, reset=True, embed=True)
    return neo4j_config
