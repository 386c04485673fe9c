"""Bulk writers: vectors from Arrow without per-value Python, parallel sessions on disjoint batches."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from driftgraph.errors import IngestError
from driftgraph.store.bulk import parallel_write, vector_batches, vector_dimensions
from tests.support.cypher import q


def _file(tmp_path, vectors):
    path = tmp_path / "embeddings.entity_description.parquet"
    ids = [f"e{i}" for i in range(len(vectors))]
    pq.write_table(pa.table({"id": ids, "embedding": pa.array(vectors, type=pa.list_(pa.float32()))}), path)
    return path


def test_vectors_come_out_as_float_rows_nulls_and_unmapped_dropped(tmp_path):
    vecs = [[float(i), 0.5, -1.0] for i in range(7)]
    vecs[3] = None
    path = _file(tmp_path, vecs)
    assert vector_dimensions(path) == {3}
    rows = [r for b in vector_batches(path, 2) for r in b]
    assert [r["id"] for r in rows] == ["e0", "e1", "e2", "e4", "e5", "e6"]
    assert rows[-1]["embedding"] == [6.0, 0.5, -1.0] and isinstance(rows[0]["embedding"][0], float)
    mapped = [r for b in vector_batches(path, 4, {"e1": "n1", "e5": "n5"}) for r in b]
    assert mapped == [{"id": "n1", "embedding": [1.0, 0.5, -1.0]}, {"id": "n5", "embedding": [5.0, 0.5, -1.0]}]


def test_mixed_dimensions_are_reported(tmp_path):
    assert vector_dimensions(_file(tmp_path, [[1.0, 2.0], [1.0, 2.0, 3.0], None])) == {2, 3}


@pytest.mark.parametrize("writers", [1, 3])
def test_parallel_writers_store_every_vector_idempotently(store, tmp_path, writers):
    n, dims = 500, 8
    store.run("tests/seed_entities", rows=[{"id": f"e{i}", "title": f"T{i}", "description": "", "embedding": None}
                                           for i in range(n)])  # fmt: skip
    vecs = np.random.default_rng(1).standard_normal((n, dims)).astype(np.float32)
    path = _file(tmp_path, vecs.tolist())
    ticks: list[int] = []
    written = parallel_write(store, "ingest/embeddings_entity", vector_batches(path, 37), writers, ticks.append)
    assert written == n and sum(ticks) == n
    again = parallel_write(store, "ingest/embeddings_entity", vector_batches(path, 37), writers)
    assert again == n
    got = {r["id"]: r["v"] for r in q(store, "MATCH (e:__Entity__) RETURN e.id AS id, e.embedding AS v")}
    assert np.allclose(np.asarray([got[f"e{i}"] for i in range(n)]), vecs)


def test_a_failing_batch_is_one_line_naming_the_statement(store):
    store.run("tests/seed_entities", rows=[{"id": "x", "title": "X", "description": "", "embedding": None}])
    bad = iter([[{"id": "x", "embedding": "not a vector"}]])
    with pytest.raises(IngestError) as err:
        parallel_write(store, "ingest/embeddings_entity", bad, 2)
    assert "embeddings_entity" in str(err.value) and "re-run" in str(err.value)


def test_scale_bench_imports_the_synthetic_vectors_instead_of_re_embedding(neo4j_cfg, tmp_path):
    """The synthetic index's embedder answers with its shipped vectors, so the importer's provenance check
    passes and the scale bench times the bulk write of precomputed vectors (not a live embedding model)."""
    from bench.run.dg.synthvec import SynthEmbedder
    from bench.run.synth import generate
    from driftgraph.api import Engine
    from driftgraph.config import SynonymsConfig
    from driftgraph.runtime import Runtime

    folder = tmp_path / "synth"
    counts = generate(300, folder)
    embedder = SynthEmbedder(folder, "synthetic-model", 384)
    with pytest.raises(KeyError):
        embedder.embed(["not a text of this index"])
    # as the scale bench runs it: names of random entities have no synonyms worth drawing, and this embedder
    # knows no text but the shipped nodes' (bench/run/dg/scale.py turns the step off the same way)
    cfg = neo4j_cfg.model_copy(update={"synonyms": SynonymsConfig(enabled=False)})
    engine = Engine(Runtime(cfg, embedder=embedder))
    try:
        summary = engine.import_graphrag(folder, reset=True)
    finally:
        engine.close()
    emb = summary.embedded.kinds
    assert emb["entity"].precomputed == counts["entities"] and emb["entity"].embedded == 0
    assert emb["chunk"].precomputed == counts["text_units"] and emb["chunk"].embedded == 0
    assert emb["community"].precomputed > 0 and emb["community"].embedded == 0
    assert "embeddings_other_model" not in summary.warnings
    assert summary.synonyms.skipped == "synonyms.enabled is false"


def test_prefetched_batches_keep_their_order_and_raise_where_the_rows_failed():
    from driftgraph.store.ingest import prefetched

    assert list(prefetched(iter([[{"i": 1}], [{"i": 2}], [{"i": 3}]]))) == [[{"i": 1}], [{"i": 2}], [{"i": 3}]]

    def failing():
        yield [{"i": 1}]
        raise ValueError("row 2 is bad")

    got = []
    with pytest.raises(ValueError, match="row 2 is bad"):
        for batch in prefetched(failing()):
            got.append(batch)
    assert got == [[{"i": 1}]]  # the batch before the failure was handed over first


def test_a_consumer_that_stops_early_does_not_leave_the_producer_blocked():
    import threading

    from driftgraph.store.ingest import prefetched

    produced = []

    def endless():
        i = 0
        while True:
            produced.append(i)
            yield [{"i": i}]
            i += 1

    it = prefetched(endless(), depth=2)
    assert next(it) == [{"i": 0}]
    it.close()  # what a failed transaction does to the loop in ingest._write
    assert not [t for t in threading.enumerate() if t.name == "driftgraph-rows"]
    assert len(produced) <= 5  # bounded read-ahead: depth 2, plus the batches in hand
