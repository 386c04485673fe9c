"""Fixtures: a real Neo4j (testcontainers, else NEO4J_URI; never a silent skip in CI) and a fake LLM."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from driftgraph.config import Config, parse_config
from tests.support.fake_openai import FakeOpenAI

ROOT = Path(__file__).resolve().parent.parent
# the shared data sets beside the checkout, or where DRIFTGRAPH_SHARED_DATA says (as bench/data.py reads it)
SHARED_DATA = Path(os.environ.get("DRIFTGRAPH_SHARED_DATA") or ROOT.parent / "shared" / "data")
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


def empty_database(cfg: Config) -> None:
    """Every node, constraint and index (other tools' too): a test starts from nothing, whatever used the
    database before (another test, module or run, a developer's own work). The test database is the tests'."""
    from driftgraph.store.db import Store
    from tests.support.foreign_graphs import wipe

    with Store(cfg.neo4j) as store:
        wipe(store)


@pytest.fixture
def neo4j_cfg(neo4j_config: dict) -> Config:
    """A Config pointing at the test Neo4j, with the database emptied (``empty_database``)."""
    cfg = make_config(neo4j_config)
    empty_database(cfg)
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


# operation-dulce as this session's own import left it, per database: what ``dulce_fingerprint`` read then.
_DULCE: dict[tuple[str, str], tuple] = {}
_GRAPH = """
CALL () { MATCH (n) WHERE NOT (n:Retrieval OR n:DriftStep)
          RETURN count(n) AS nodes, sum(size(keys(n))) AS props, count(n.embedding) AS vectors }
CALL () { MATCH (a)-[r]->(b) WHERE NOT (a:Retrieval OR a:DriftStep OR b:Retrieval OR b:DriftStep)
          RETURN count(r) AS relationships }
RETURN nodes, props, vectors, relationships
"""
_DELETE_TRACES = "MATCH (n) WHERE n:Retrieval OR n:DriftStep CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS"


def dulce_fingerprint(store) -> tuple:
    """Nodes, properties, vectors, relationships (retrievals excluded), index and constraint names."""
    from tests.support.cypher import q

    graph = tuple(q(store, _GRAPH)[0].values())
    indexes = sorted(f"{r['type']}:{r['name']}" for r in q(store, "SHOW INDEXES YIELD name, type"))
    constraints = sorted(r["name"] for r in q(store, "SHOW CONSTRAINTS YIELD name"))
    return graph, tuple(indexes), tuple(constraints)


def ensure_dulce(neo4j_config: dict, *, fresh_traces: bool = False) -> dict:
    """The database holds exactly operation-dulce with embeddings: kept when this session imported it and
    nothing changed it since, else emptied and imported again. ``fresh_traces`` also deletes stored retrievals."""
    from driftgraph.api import open_engine
    from driftgraph.store.db import Store
    from tests.support.cypher import q

    path = _require_shared(SHARED_DATA / "operation-dulce")
    cfg = make_config(neo4j_config)
    key = (cfg.neo4j.uri, cfg.neo4j.database)
    with Store(cfg.neo4j) as store:
        if key in _DULCE and dulce_fingerprint(store) == _DULCE[key]:
            if fresh_traces:
                q(store, _DELETE_TRACES)
            return neo4j_config
    _DULCE.pop(key, None)
    empty_database(cfg)
    with open_engine(cfg) as eng:
        eng.import_graphrag(path, reset=True, embed=True)
    with Store(cfg.neo4j) as store:
        _DULCE[key] = dulce_fingerprint(store)
    return neo4j_config


@pytest.fixture(scope="module")
def dulce(neo4j_config: dict) -> dict:
    """operation-dulce with embeddings and no stored retrievals at the start of the module; yields the Neo4j
    settings. Imported only when the database is not that already (``ensure_dulce``)."""
    return ensure_dulce(neo4j_config, fresh_traces=True)


@pytest.fixture(autouse=True)
def _dulce_intact(request: pytest.FixtureRequest) -> None:
    """Before every test that uses ``dulce``: an earlier test that changed the graph (deleted sources, emptied
    the database) does not leak into it; retrievals stored earlier in the module stay."""
    if "dulce" in request.fixturenames:
        ensure_dulce(request.getfixturevalue("dulce"))
