"""Against a real Neo4j: schema bootstrap, vector and fulltext indexes, the embedder guard."""

import pytest

from driftgraph.store.schema import SchemaMismatch, ensure_schema, read_meta, schema_status


def test_schema_creates_vector_and_fulltext_indexes(store):
    ensure_schema(store, "test-embedder", 4)
    ensure_schema(store, "test-embedder", 4)  # idempotent
    status = schema_status(store)
    assert status["ok"], status
    assert status["vector_indexes"] == {"entity_embedding": 4, "chunk_embedding": 4, "community_embedding": 4}
    assert read_meta(store).embedder == "test-embedder"


def test_vector_and_fulltext_queries_work(store):
    ensure_schema(store, "test-embedder", 3)
    store.run(
        "tests/seed_entities",
        rows=[
            {"id": "a", "title": "Alpha Station", "description": "orbital research base", "embedding": [1.0, 0.0, 0.0]},
            {"id": "b", "title": "Beta Mine", "description": "asteroid mining colony", "embedding": [0.0, 1.0, 0.0]},
            {"id": "c", "title": "Gamma Port", "description": "trade hub near the mine", "embedding": [0.1, 0.9, 0.1]},
        ],
    )
    store.run_auto("tests/await_indexes")
    hits = store.read("tests/vector_entities", k=2, vector=[0.0, 1.0, 0.05])
    assert [h["id"] for h in hits] == ["b", "c"]
    assert hits[0]["score"] >= hits[1]["score"]
    text_hits = store.read("tests/fulltext_entities", q="mining")
    assert [h["id"] for h in text_hits] == ["b"]


def test_other_embedder_is_refused_naming_both(store):
    ensure_schema(store, "model-one", 384)
    with pytest.raises(SchemaMismatch) as err:
        ensure_schema(store, "model-two", 1536)
    assert "model-one" in str(err.value) and "model-two" in str(err.value)
    assert "384" in str(err.value) and "1536" in str(err.value)


def test_reset_removes_driftgraph_data(store):
    ensure_schema(store, "e", 3)
    store.run("tests/seed_entities", rows=[{"id": "x", "title": "X", "description": "", "embedding": [1.0, 0, 0]}])
    store.run("tests/foreign_pair", entity_id="x")
    store.run_auto("admin/reset")
    assert store.read("admin/counts")[0]["entities"] == 0
    assert read_meta(store) is None
    # another tool's nodes and the edge between them stay; the edge to the deleted entity went with it
    assert store.read("tests/foreign_pair_counts")[0] == {"nodes": 2, "knows": 1, "points_at": 0}


def test_vector_indexes_are_created_with_the_configured_hnsw_settings(neo4j_cfg, neo4j_config):
    """``neo4j.vector_index.m`` / ``ef_construction`` reach the indexes a fresh schema creates; an index that
    exists keeps its settings (re-running the schema with others changes nothing)."""
    from driftgraph.config import VectorIndexConfig
    from driftgraph.runtime import Runtime
    from tests.conftest import make_config

    cfg = make_config({**neo4j_config, "vector_index": {"m": 8, "ef_construction": 40}})
    rt = Runtime(cfg)
    try:
        rt.ensure_schema()
        for name in ("entity_embedding", "chunk_embedding", "community_embedding"):
            got = rt.store.read("tests/vector_index_options", index=name)[0]
            assert (got["m"], got["ef_construction"]) == (8, 40), name
        ensure_schema(rt.store, rt.embedder.model_id, rt.embedder.dimensions, VectorIndexConfig())
        got = rt.store.read("tests/vector_index_options", index="entity_embedding")[0]
        assert (got["m"], got["ef_construction"]) == (8, 40)
    finally:
        rt.close()
