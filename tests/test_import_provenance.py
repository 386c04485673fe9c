"""Precomputed GraphRAG vectors are used only when they come from the configured embedder, not merely when
their dimension matches: a same-size file from another model is re-embedded and the summary says why."""

from __future__ import annotations

import shutil

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from driftgraph.api import open_engine
from tests.conftest import make_config

FILE = "embeddings.community_full_content.parquet"


def _folder(shared_data, tmp_path, vectors_of) -> object:
    src = shared_data / "operation-dulce"
    out = tmp_path / "dulce"
    shutil.copytree(src, out)
    reports = pq.read_table(src / "community_reports.parquet", columns=["id", "full_content"]).to_pylist()
    vectors = vectors_of([r["full_content"] for r in reports])
    table = pa.table({"id": [r["id"] for r in reports], "embedding": [list(map(float, v)) for v in vectors]})
    pq.write_table(table, out / FILE)
    return out


def test_same_dimension_other_model_is_re_embedded_own_vectors_are_used(neo4j_cfg, neo4j_config, shared_data, tmp_path):
    cfg = make_config(neo4j_config)
    with open_engine(cfg) as eng:
        rng = np.random.default_rng(0)
        dims = eng.embedder.dimensions
        foreign = _folder(shared_data, tmp_path / "a", lambda texts: rng.standard_normal((len(texts), dims)))
        summary = eng.import_graphrag(foreign, reset=True, embed=True)
        community = summary.embedded.kinds["community"]
        assert community.precomputed == 0 and community.embedded == 10
        assert "are not" in community.note and "re-embedded" in community.note
        assert summary.warnings["embeddings_other_model"] == 1
        own = _folder(shared_data, tmp_path / "b", lambda texts: eng.embedder.embed(texts))
        summary = eng.import_graphrag(own, reset=True, embed=True)
        community = summary.embedded.kinds["community"]
        assert community.precomputed == 10 and community.embedded == 0
