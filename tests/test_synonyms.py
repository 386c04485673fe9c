"""Synonym edges (``store/synonyms.py``): names that embed alike are linked once, a re-run adds nothing, a rename
or a new threshold redoes what changed, a graph past the limit is skipped loudly, and the bridge hops across
them. Against a real Neo4j and the offline embedder, on the fixture whose chain needs the synonym BOB ~ Bob."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from driftgraph import ImportSummary
from driftgraph.api import open_engine
from driftgraph.config import LocalConfig, SynonymsConfig, parse_config
from driftgraph.errors import ConfigError
from driftgraph.query.local.search import LocalAsk, build_local_context
from driftgraph.store import ingest
from driftgraph.store.db import Store
from driftgraph.store.synonyms import link_synonyms, nearest_pairs
from tests.conftest import make_config
from tests.support import graphrag_fixture
from tests.support.cypher import q

SYN_EDGES = (
    "MATCH (a:__Entity__)-[r:SYN]->(b:__Entity__) RETURN a.title AS a, b.title AS b, r.similarity AS s ORDER BY a, b"
)


def _import(cfg: Any, folder: Path) -> ImportSummary:
    return graphrag_fixture.import_fresh(cfg, folder, graphrag_fixture.synonym_tables())


def _link(cfg: Any, settings: SynonymsConfig) -> Any:
    with open_engine(cfg) as eng:
        return link_synonyms(eng.store, eng.runtime.embedder.embed, settings, 100)


# -- pure ------------------------------------------------------------------------------------------------------
def test_nearest_pairs_caps_per_entity_orders_each_pair_and_never_links_a_name_to_itself() -> None:
    vectors = np.asarray([[1.0, 0.0], [0.96, 0.28], [0.8, 0.6], [0.0, 1.0]], dtype=np.float32)  # unit rows
    ids = ["d", "c", "b", "a"]
    pairs = nearest_pairs(vectors, ids, [0], 0.75, 1)  # d: c (0.96) and b (0.8) pass; the cap keeps c
    assert pairs == [{"a": "c", "b": "d", "similarity": pytest.approx(0.96, abs=1e-4)}]
    both = nearest_pairs(vectors, ids, [0, 1], 0.75, 5)  # d-c found from both sides is one pair
    assert [(p["a"], p["b"]) for p in both] == [("b", "c"), ("b", "d"), ("c", "d")]
    assert nearest_pairs(vectors, ids, [3], 0.75, 5) == []  # a is like nothing


def test_synonym_keys_are_validated() -> None:
    with pytest.raises(ConfigError, match="min_similarity"):
        parse_config({"synonyms": {"min_similarity": 1.5}}, "test")
    with pytest.raises(ConfigError):
        parse_config({"synonyms": {"threshold": 0.9}}, "test")
    with pytest.raises(ConfigError):
        parse_config({"local": {"bridge_synonyms": "sometimes"}}, "test")


# -- against Neo4j ---------------------------------------------------------------------------------------------
def test_import_links_look_alike_names_once_and_a_rerun_adds_nothing(neo4j_config: dict, tmp_path: Path) -> None:
    cfg = make_config(neo4j_config)
    summary = _import(cfg, tmp_path)
    syn = summary.synonyms
    assert (syn.names_embedded, syn.entities_linked, syn.edges_total, syn.skipped) == (5, 5, 1, None)
    assert summary.phase_seconds["synonyms"] >= 0
    with Store(cfg.neo4j) as store:
        edges = q(store, SYN_EDGES)
    # BOB and Bob: one name to an uncased embedder; ADA, CY and ENGINES are like nothing else here
    assert [(e["a"], e["b"]) for e in edges] == [("BOB", "Bob")] and edges[0]["s"] > 0.99
    again = _link(cfg, cfg.synonyms)
    assert (again.names_embedded, again.entities_linked, again.edges_total, again.rebuilt) == (0, 0, 1, False)


def test_a_renamed_entity_loses_its_synonyms_and_a_new_threshold_rebuilds_them(
    neo4j_config: dict, tmp_path: Path
) -> None:
    cfg = make_config(neo4j_config)
    _import(cfg, tmp_path)
    renamed = {"id": "e5", "title": "ENGINE", "type": "THING", "description": "Builds engines", "text_unit_ids": ["t1"]}
    with Store(cfg.neo4j) as store:
        ingest.write_entities(store, [renamed], 10)
        assert q(store, SYN_EDGES) == []  # the rename dropped BOB ~ Bob with e5's name vector
        assert q(store, "MATCH (n:__Entity__ {id: 'e5'}) RETURN n.name_embedding IS NULL AS gone")[0]["gone"]
    relinked = _link(cfg, cfg.synonyms)
    assert (relinked.names_embedded, relinked.entities_linked) == (1, 1)  # only the renamed entity
    with Store(cfg.neo4j) as store:
        edges = q(store, SYN_EDGES)
    # edges point from the smaller id: e4 (ENGINES) to e5
    assert [(e["a"], e["b"]) for e in edges] == [("ENGINES", "ENGINE")] and 0.85 <= edges[0]["s"] < 0.95
    stricter = _link(cfg, SynonymsConfig(min_similarity=0.95))
    assert stricter.rebuilt and stricter.names_embedded == 0 and stricter.entities_linked == 5
    assert stricter.edges_total == 0  # ENGINE ~ ENGINES (about 0.91) is below the new threshold


def test_synonyms_are_skipped_loudly_past_the_entity_limit_and_quietly_when_disabled(
    neo4j_config: dict, tmp_path: Path
) -> None:
    summary = _import(make_config(neo4j_config, synonyms={"max_entities": 4}), tmp_path / "a")
    assert "5 entities > synonyms.max_entities (4)" in summary.synonyms.skipped and summary.synonyms.too_many
    assert summary.warnings["synonyms_skipped"] == 1
    off = _import(make_config(neo4j_config, synonyms={"enabled": False}), tmp_path / "b")
    assert off.synonyms.skipped == "synonyms.enabled is false" and not off.synonyms.too_many
    assert "synonyms_skipped" not in off.warnings
    with Store(make_config(neo4j_config).neo4j) as store:
        assert q(store, SYN_EDGES) == []
        assert q(store, "MATCH (n:__Entity__) WHERE n.name_embedding IS NOT NULL RETURN count(n) AS n")[0]["n"] == 0


def test_the_bridge_hops_across_a_synonym_and_names_it_in_the_path(neo4j_config: dict, tmp_path: Path) -> None:
    """t3 (the one chunk hit) -ADA- t2 names BOB; t1 names Bob. Only the SYN edge reaches t1."""
    cfg = make_config(neo4j_config)
    _import(cfg, tmp_path)

    def context(synonyms: bool) -> Any:
        settings = LocalConfig(chunk_top_k=1, seed_chunks=1, entity_chunks=0, bridge_synonyms=synonyms)
        with open_engine(cfg) as eng:
            return build_local_context(
                eng.runtime.for_run(), LocalAsk("What did Cy write about Ada?", budget=2000), settings
            )

    ctx = context(True)
    items = {i.id: i for i in ctx.recorder.items if i.source == "chunk"}
    assert items["t1"].status == "included" and "Bob built engines." in ctx.text
    assert items["t1"].hop == "bridge" and items["t1"].via is not None and items["t1"].via.endswith("BOB ~ Bob")
    assert ctx.recorder.round_trips == 3
    without = context(False)
    assert "t1" not in {i.id for i in without.recorder.items} and "Bob built engines." not in without.text


def test_the_cli_import_prints_what_the_synonym_step_did(neo4j_config: dict, tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    folder = graphrag_fixture.write(tmp_path / "idx", graphrag_fixture.synonym_tables())
    env = {**os.environ, "NEO4J_URI": neo4j_config["uri"], "NEO4J_PASSWORD": neo4j_config["password"]}
    cmd = [sys.executable, "-m", "driftgraph", "import-graphrag", str(folder), "--reset"]
    res = subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert "synonyms: 5 names embedded, 5 entities compared, SYN edges 1" in res.stdout
    (tmp_path / "driftgraph.yaml").write_text("synonyms:\n  max_entities: 3\n")
    res = subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert "synonyms: skipped (5 entities > synonyms.max_entities (3)" in res.stdout
    assert "warning: synonyms_skipped: 1" in res.stdout
