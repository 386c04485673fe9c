"""Cluster and Aura URIs against a real Neo4j: a single instance answers routing, so neo4j:// is testable here."""

import json

import pytest

from driftgraph.errors import StoreError
from driftgraph.store.db import Store, routes
from tests.conftest import make_config
from tests.test_cli import run


def _routing(neo4j_config: dict) -> dict:
    _, rest = neo4j_config["uri"].split("://", 1)
    return {**neo4j_config, "uri": f"neo4j://{rest}"}


def test_routing_schemes_are_recognised():
    assert routes("neo4j://a:7687") and routes("neo4j+s://x.databases.neo4j.io") and routes("NEO4J+SSC://h")
    assert not routes("bolt://127.0.0.1:7687") and not routes("bolt+s://h")


def test_write_then_read_through_the_router_carries_bookmarks(neo4j_cfg, neo4j_config):
    cfg = make_config(_routing(neo4j_config))
    with Store(cfg.neo4j) as writer:
        assert writer.routes
        writer.run("tests/seed_entities", rows=[{"id": "r1", "title": "Routed", "description": "", "embedding": [1.0]}])
        assert writer.bookmarks.get_bookmarks(), "a write leaves a bookmark"
        # Another Store of the same process (a query after an import) shares the bookmarks, so it reads the write.
        with Store(cfg.neo4j) as reader:
            assert reader.bookmarks is writer.bookmarks
            assert reader.read("admin/counts")[0]["entities"] == 1


def test_reads_run_in_read_access_mode(neo4j_cfg, neo4j_config):
    """A write statement sent through `read` is refused: reads are READ transactions, which a cluster routes to
    followers and read replicas."""
    with Store(make_config(_routing(neo4j_config)).neo4j) as store, pytest.raises(StoreError) as err:
        store.read("tests/seed_entities", rows=[{"id": "w", "title": "W", "description": "", "embedding": [1.0]}])
    assert "read" in str(err.value).lower()
    with Store(make_config(_routing(neo4j_config)).neo4j) as store:
        assert store.read("admin/counts")[0]["entities"] == 0


def test_doctor_prints_the_routing_table(neo4j_cfg, neo4j_config, tmp_path):
    cfg = _routing(neo4j_config)
    env = {"NEO4J_URI": cfg["uri"], "NEO4J_PASSWORD": cfg["password"]}
    report = json.loads(run("doctor", "--json", cwd=tmp_path, env=env).stdout)
    assert report["neo4j"]["ok"] is True and report["routing"]["ok"] is True, report
    (server,) = report["routing"]["table"]
    assert set(server["roles"]) == {"WRITE", "READ", "ROUTE"}
    line = next(ln for ln in run("doctor", cwd=tmp_path, env=env).stdout.splitlines() if " routing " in ln)
    assert "ok" in line and "WRITE" in line and "READ" in line and "ROUTE" in line
    plain = {**env, "NEO4J_URI": "bolt://" + cfg["uri"].split("://", 1)[1]}
    assert "routing" not in json.loads(run("doctor", "--json", cwd=tmp_path, env=plain).stdout)
