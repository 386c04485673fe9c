"""The committed sample index (examples/sample-index/): the importer loads it as the graph model, and it is
exactly what the indexing pipeline makes of examples/docs/ with the hand-written answers."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from driftgraph.api import Engine
from tests.conftest import make_config

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "examples" / "sample-index"
pytestmark = pytest.mark.e2e


def _table(name: str) -> list[dict]:
    return pq.read_table(SAMPLE / f"{name}.parquet").to_pylist()


def test_sample_index_matches_hand_checked_facts():
    entities = {e["title"]: e for e in _table("entities")}
    assert len(entities) == 13 and entities["INES HALLORAN"]["type"] == "PERSON"
    assert entities["KELMOUTH"]["degree"] == 6 and entities["TIDEWATER GRID COOPERATIVE"]["degree"] == 8
    by_id = {e["id"]: e["title"] for e in _table("entities")}
    pairs = {frozenset((r["source"], r["target"])) for r in _table("relationships")}
    assert frozenset(("INES HALLORAN", "TIDEWATER GRID COOPERATIVE")) in pairs
    assert frozenset(("CORRAN FOUNDRY", "CORRAN")) in pairs
    reports = {r["title"]: r for r in _table("community_reports")}
    assert reports["Corran Foundry of Corran"]["rank"] == 4.0
    communities = {c["community"]: sorted(by_id[i] for i in c["entity_ids"]) for c in _table("communities")}
    assert ["CORRAN", "CORRAN FOUNDRY"] in communities.values()
    assert sorted(d["title"] for d in _table("documents")) == sorted(p.name for p in (ROOT / "examples/docs").iterdir())


def test_sample_index_imports_as_the_graph_model(neo4j_cfg, store):
    with Engine(neo4j_cfg) as eng:
        summary = eng.import_graphrag(SAMPLE)
    assert not summary.warnings
    m = store.read("tests/index_model")[0]
    assert (m["documents"], m["chunks"], m["entities"], m["relationships"]) == (4, 4, 13, 29)
    assert m["communities"] == m["reports"] == m["report_vectors"] == 4
    for bad in ("orphan_chunks", "unmentioned", "bad_degree", "bad_relationships", "bad_communities"):
        assert m[bad] == 0, bad


def test_sample_index_is_what_the_pipeline_makes_of_the_answers(neo4j_config, neo4j_cfg, fake_llm, store, tmp_path):
    spec = importlib.util.spec_from_file_location("build_sample_index", ROOT / "scripts" / "build_sample_index.py")
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    answers = json.loads((ROOT / "examples" / "sample-answers.json").read_text(encoding="utf-8"))
    fake_llm.responder = build.Answers(answers, ROOT / "examples" / "docs")
    cfg = make_config(
        neo4j_config,
        llm={"base_url": fake_llm.base_url, "model": "hand-written"},
        index={"cache_dir": str(tmp_path / "cache")},
    )
    with Engine(cfg) as eng:
        eng.index(ROOT / "examples" / "docs")
        out = tmp_path / "export"
        eng.export_graphrag(out)
    assert not fake_llm.responder.missing
    for name, key in (("entities", "id"), ("relationships", "id"), ("text_units", "id"), ("documents", "id"),
                      ("communities", "id"), ("community_reports", "id")):  # fmt: skip
        got = sorted(pq.read_table(out / f"{name}.parquet").to_pylist(), key=lambda r: r[key])
        want = sorted(_table(name), key=lambda r: r[key])
        assert got == want, f"{name} differs from the committed sample index: rerun scripts/build_sample_index.py"
