"""The HNSW bench (bench/run/dg/hnsw.py) against a real Neo4j: recall is counted against exact search, each
setting's index really is built with that setting, and the bench leaves nothing behind."""

from __future__ import annotations

import numpy as np


def test_recall_against_exact_search_and_nothing_left_behind(neo4j_cfg, neo4j_config, monkeypatch):
    import neo4j

    from bench.run.dg import hnsw

    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((200, 64)).astype(np.float32)
    queries = vectors[:6] + 0.01 * rng.standard_normal((6, 64)).astype(np.float32)
    exact = hnsw._exact(vectors, queries)
    assert all(i in top for i, top in enumerate(exact))  # a query's own vector is among its exact top 10

    created: list[str] = []
    real_query = hnsw._query

    def spy(driver, statement, **params):
        if statement.startswith("CREATE VECTOR INDEX"):
            created.append(f"{params['m']}:{params['ef']}")
        return real_query(driver, statement, **params)

    monkeypatch.setattr(hnsw, "_query", spy)
    auth = (neo4j_config["username"], neo4j_config["password"])
    with neo4j.GraphDatabase.driver(neo4j_config["uri"], auth=auth) as driver:
        rows = hnsw._measure(driver, vectors, queries, [(16, 100), (4, 4)])
        left = driver.execute_query("MATCH (n:HnswBench) RETURN count(n) AS n").records[0]["n"]
        indexes = [r["name"] for r in driver.execute_query("SHOW INDEXES YIELD name RETURN name").records]
    assert created == ["16:100", "4:4"]
    assert [(r["m"], r["ef_construction"]) for r in rows] == [(16, 100), (4, 4)]
    best = rows[0]
    # a broken id mapping would score ~0.05; int8 quantization swaps near-tied neighbours, so not 1.0
    assert best["recall_at_10_of_30"] >= 0.7
    assert all(0.0 <= r["recall_at_10_of_10"] <= 1.0 and r["build_s"] > 0 for r in rows)
    assert left == 0 and "hnsw_bench" not in indexes
