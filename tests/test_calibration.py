"""The index's own entry threshold (store/calibration.py) and what local search does with it.

Units: the threshold rule, which value wins (config, calibrated, fallback), the report gate with no entry entity.
Against a real Neo4j: an import stores the calibration (checked against a brute-force pass over every entity
vector read back from the database), doctor shows it and where it comes from, and an index built through the
fake model whose entities all sit below 0.42 for the README's demo question (a small model's terse descriptions
and titles the question does not spell out): the calibrated threshold lets the question in and the context fills
with the storm report and chunks, where 0.42 left it mostly empty. The same index with no entity let in shows
the thematic route drawing reports by similarity, and a mostly empty context's trace accounting for every
candidate.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from driftgraph.api import open_engine
from driftgraph.config import LocalConfig
from driftgraph.query.local.entry import EntryResult, resolve_thresholds
from driftgraph.store import calibration
from driftgraph.store.calibration import PROBES, read_calibration
from driftgraph.store.db import Store
from tests.conftest import dulce_fingerprint, empty_database, make_config
from tests.support import index_responder
from tests.support.cypher import q
from tests.support.fake_openai import FakeOpenAI

ROOT = Path(__file__).resolve().parent.parent
DEMO = "Who recovered the turbines after the Winter Storm of 2019, and what did the council change afterwards?"


# -- units -----------------------------------------------------------------------------------------------------
def test_threshold_is_the_noise_percentile_plus_the_margin_clamped():
    # 40 probes: 36 at 0.10, then 0.30, 0.31, 0.32, 0.50. The 90th percentile (numpy's linear rule) sits at rank
    # 0.9 * 39 = 35.1: 0.10 + 0.1 * (0.30 - 0.10) = 0.12; plus the 0.05 margin: 0.17.
    best = [0.10] * 36 + [0.30, 0.31, 0.32, 0.50]
    noise, value = calibration.threshold(best)
    assert noise == pytest.approx(0.12) and value == pytest.approx(0.17)
    assert calibration.threshold([-0.2] * 40)[1] == calibration.LOWEST == 0.15  # an empty-looking space: floor
    assert calibration.threshold([0.95] * 40)[1] == calibration.HIGHEST == 0.8  # inflated cosines: ceiling
    assert len(set(PROBES)) == len(PROBES) == 40


def test_an_explicit_value_wins_then_the_calibrated_one_then_the_fallback():
    stored = {"min_similarity": 0.27, "report_min_similarity": 0.19}
    t = resolve_thresholds(LocalConfig(), stored)
    assert (t.min_similarity, t.source, t.report_min_similarity, t.report_source) == (
        0.27,
        "calibrated",
        0.19,
        "calibrated",
    )
    t = resolve_thresholds(LocalConfig(min_similarity=0.5), stored)
    assert (t.min_similarity, t.source, t.report_min_similarity) == (0.5, "config", 0.19)
    t = resolve_thresholds(LocalConfig(), None)
    assert (t.min_similarity, t.source, t.report_min_similarity, t.report_source) == (
        0.42,
        "fallback",
        0.42,
        "fallback",
    )
    t = resolve_thresholds(LocalConfig(min_similarity_fallback=0.3), {"min_similarity": None})
    assert (t.min_similarity, t.source) == (0.3, "fallback")
    assert t.to_dict()["min_similarity"] == {"value": 0.3, "source": "fallback"}


def test_with_no_entry_entity_reports_face_the_report_threshold_and_chunks_the_entity_one():
    s = LocalConfig()
    gates = resolve_thresholds(s, {"min_similarity": 0.3, "report_min_similarity": 0.2})
    on_topic = EntryResult(present={"entity": True}, thresholds=gates)
    assert on_topic.chunk_gate(s) == s.chunk_min_similarity == on_topic.report_gate(s, thematic=False)
    off = EntryResult(present={"entity": True}, off_topic=True, strict=True, thresholds=gates)
    assert off.chunk_gate(s) == 0.3 and off.report_gate(s, thematic=False) == 0.2
    assert off.report_gate(s, thematic=True) == -1.0  # thematic wording: the nearest reports whatever their cosine


# -- a real import ---------------------------------------------------------------------------------------------
def _best_per_probe(store: Store, embed: Any, label: str, where: str = "") -> np.ndarray:
    rows = q(store, f"MATCH (n:{label}) WHERE n.embedding IS NOT NULL {where} RETURN n.embedding AS v")
    vectors = np.asarray([r["v"] for r in rows], dtype=np.float64)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    probes = np.asarray(embed(list(PROBES)), dtype=np.float64)
    probes /= np.linalg.norm(probes, axis=1, keepdims=True)
    return np.asarray((probes @ vectors.T).max(axis=1))


def test_import_stores_the_calibration_doctor_shows_it_and_config_overrides_it(neo4j_cfg, neo4j_config):
    with open_engine(neo4j_cfg) as eng:
        eng.import_graphrag(ROOT / "examples" / "sample-index", reset=True, embed=True)
        cal = read_calibration(eng.store)
        assert cal is not None and cal.embedder == eng.embedder.model_id and cal.probes == len(PROBES)
        assert cal.entities == q(eng.store, "MATCH (e:__Entity__) RETURN count(e) AS n")[0]["n"]
        # the same rule by brute force over every vector read back (the calibration asked the vector indexes)
        ents = _best_per_probe(eng.store, eng.embedder.embed, "__Entity__")
        reps = _best_per_probe(eng.store, eng.embedder.embed, "__Community__", "AND n.full_content IS NOT NULL")
        for got, best in ((cal.min_similarity, ents), (cal.report_min_similarity, reps)):
            want = min(0.8, max(0.15, float(np.percentile(best, 90)) + 0.05))
            assert got == pytest.approx(want, abs=2e-3)
        assert cal.min_similarity < 0.42  # one small town's index: questions about anything else stay far below
        doc = eng.doctor().to_dict()["schema"]
        assert doc["min_similarity"] == cal.min_similarity and doc["min_similarity_source"] == "calibrated"
        assert doc["calibration"]["entity_noise"] == cal.entity_noise and "computed_at" not in doc["calibration"]
        out = eng.query_local(DEMO, context_only=True).to_dict()
        assert out["trace"]["thresholds"]["min_similarity"] == {"value": cal.min_similarity, "source": "calibrated"}
        stored = eng.retrieval(out["retrieval_id"])["retrieval"]["trace"]
        assert stored["thresholds"]["min_similarity"]["source"] == "calibrated"
    with open_engine(make_config(neo4j_config, local={"min_similarity": 0.5})) as eng:
        doc = eng.doctor().to_dict()["schema"]
        assert (doc["min_similarity"], doc["min_similarity_source"]) == (0.5, "config")
        out = eng.query_local(DEMO, context_only=True).to_dict()
        assert out["trace"]["thresholds"]["min_similarity"] == {"value": 0.5, "source": "config"}
        by_similarity = [e for e in out["trace"]["entry"] if e.get("rule") == "similarity"]
        assert all(e["similarity"] >= 0.5 for e in by_similarity)
    with open_engine(neo4j_cfg) as eng:  # no vectors, nothing to measure: the earlier value goes
        eng.import_graphrag(ROOT / "examples" / "sample-index", reset=False, embed=False)
        assert read_calibration(eng.store) is None
        doc = eng.doctor().to_dict()["schema"]
        assert (doc["min_similarity"], doc["min_similarity_source"], doc["calibration"]) == (0.42, "fallback", None)


# -- an index whose entities all sit below 0.42 for the demo question -----------------------------------------
def terse(request: dict[str, Any]) -> str:
    """The fake extraction model as a small model writes: each entity titled with its type (so the question does
    not spell a title out) and described in one uninformative line; the rest as ``index_responder``."""
    fmt = (request.get("response_format") or {}).get("json_schema") or {}
    if fmt.get("name") != "extract_graph" or len(request["messages"]) > 1:
        return index_responder.responder(request)
    out = index_responder.extraction(index_responder.data_of(request))
    titles = {e["title"]: f"{e['title']} {e['type']}" for e in out["entities"]}
    for e in out["entities"]:
        e["description"] = f"{e['title'].title()} ({e['type']}) appears in the text."
        e["title"] = titles[e["title"]]
    for r in out["relationships"]:
        r["source"], r["target"] = titles[r["source"]], titles[r["target"]]
    return json.dumps(out)


_TERSE: dict[str, tuple] = {}


@pytest.fixture
def terse_index(neo4j_config: dict, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    """examples/docs indexed through ``terse``: built once per session, again only when a test changed it."""
    cfg = make_config(neo4j_config)
    with Store(cfg.neo4j) as store:
        if _TERSE.get("fingerprint") == dulce_fingerprint(store):
            yield neo4j_config
            return
    empty_database(cfg)
    server = FakeOpenAI().start()
    server.responder = terse
    try:
        build = make_config(
            neo4j_config,
            llm={"base_url": server.base_url, "model": "fake-model", "backoff_base_s": 0.0},
            index={"chunk_size": 80, "chunk_overlap": 10, "cache_dir": str(tmp_path_factory.mktemp("terse"))},
        )
        with open_engine(build) as eng:
            eng.index(ROOT / "examples" / "docs", reset=True, progress=False)
    finally:
        server.stop()
    with Store(cfg.neo4j) as store:
        _TERSE["fingerprint"] = dulce_fingerprint(store)
    yield neo4j_config


def _storm_reports(store: Store) -> set[str]:
    rows = q(store, "MATCH (c:__Community__) WHERE c.full_content CONTAINS 'WINTER STORM' RETURN c.id AS id")
    return {r["id"] for r in rows}


def _items(out: dict[str, Any], source: str, status: str) -> list[dict[str, Any]]:
    return [i for i in out["trace"]["items"] if i["source"] == source and i["status"] == status]


def test_the_calibrated_threshold_lets_the_demo_question_in_and_fills_the_budget(terse_index):
    budget = 1500  # the whole of examples/docs as this index holds it is ~1,200 tokens
    with open_engine(make_config(terse_index, local={"min_similarity": 0.42})) as eng:
        fixed = eng.query_local(DEMO, context_only=True, budget=budget).to_dict()
        storm = _storm_reports(eng.store)
        chunk_ids = {r["id"] for r in q(eng.store, "MATCH (c:Chunk) RETURN c.id AS id")}
    entities = [e for e in fixed["trace"]["entry"] if e.get("kind", "entity") == "entity"]
    best = max(e["similarity"] for e in entities)
    assert 0.3 < best < 0.42, "the fixture's point: every entity just below the old constant"
    assert all(e["status"] == "dropped" for e in entities) and storm
    assert fixed["trace"]["thresholds"]["min_similarity"] == {"value": 0.42, "source": "config"}
    assert fixed["context"]["tokens"] < budget / 2  # what the issue saw: most of the budget empty
    assert fixed["trace"]["fill"]["mostly_empty"] is True

    with open_engine(make_config(terse_index)) as eng:
        out = eng.query_local(DEMO, context_only=True, budget=budget).to_dict()
    gate = out["trace"]["thresholds"]["min_similarity"]
    assert gate["source"] == "calibrated" and gate["value"] < best
    kept = [e for e in out["trace"]["entry"] if e.get("kind", "entity") == "entity" and e["status"] == "kept"]
    assert kept and out["trace"]["route"]["shape"] == "fact"
    assert storm & {i["id"] for i in _items(out, "report", "included")}, "the storm report is in the context"
    assert {i["id"] for i in _items(out, "chunk", "included")} == chunk_ids, "every chunk of the index"
    assert not [i for i in out["trace"]["items"] if i["reason"] in ("budget", "source_cap")]
    assert "turbines" in out["context"]["text"] and "sea wall" in out["context"]["text"]
    tokens = out["context"]["tokens"]
    assert 0.8 * budget <= tokens <= budget and tokens > 3 * fixed["context"]["tokens"]
    assert "mostly_empty" not in out["trace"]["fill"]


def test_with_no_entry_entity_reports_enter_by_similarity_and_the_trace_explains_every_candidate(terse_index):
    with open_engine(make_config(terse_index, local={"min_similarity": 0.9})) as eng:
        out = eng.query_local(DEMO, context_only=True, budget=4000).to_dict()
        storm = _storm_reports(eng.store)
        stored = eng.retrieval(out["retrieval_id"])
    trace = out["trace"]
    route = trace["route"]
    assert route["shape"] == "thematic" and "no entry entity" in route["reason"]
    gates = trace["thresholds"]
    assert gates["min_similarity"]["source"] == "config" and gates["report_min_similarity"]["source"] == "calibrated"
    report_gate = gates["applied"]["report"]
    assert report_gate == gates["report_min_similarity"]["value"] < 0.9
    hits = {e["id"]: e for e in trace["entry"] if e.get("kind") == "report"}
    included = {i["id"] for i in _items(out, "report", "included")}
    assert storm & included, "reports first: the storm report drawn by similarity"
    assert all(hits[i]["similarity"] >= report_gate for i in included if i in hits)

    # every candidate is accounted for, item by item
    items = {(i["source"], i["id"]): i for i in trace["items"]}
    for e in trace["entry"]:
        kind = e.get("kind", "entity")
        if kind == "entity":
            assert e["status"] == "dropped" and e["reason"] == "below_threshold"
            continue
        item = items.get((kind, e["id"]))
        assert item is not None, f"{kind} hit {e['id']} has no trace item"
        if e["status"] == "dropped":
            assert item["status"] == "dropped" and item["reason"] in ("off_topic", "below_threshold")
    assert all(i["status"] == "included" or i["reason"] for i in trace["items"])
    fill = trace["fill"]
    assert fill["candidates"] == len(trace["items"])
    assert fill["sources"]["chunk"]["dropped"].get("off_topic", 0) == len(_items(out, "chunk", "dropped"))
    assert fill["mostly_empty"] is True and out["context"]["tokens"] < 2000
    assert any(n.startswith("context uses ") and "chunk(s) off_topic" in n for n in trace["notes"])
    dropped_edges = {(e["node_id"], e["reason"]) for e in stored["edges"] if e["edge"] == "DROPPED"}
    assert {(i["id"], i["reason"]) for i in _items(out, "report", "dropped")} <= dropped_edges


def test_the_retrieval_page_draws_the_thresholds_the_trace_recorded():
    from driftgraph.view.sections import entry_card

    trace = {
        "entry": [
            {"id": "e1", "title": "A", "kind": "entity", "similarity": 0.3, "status": "kept"},
            {"id": "r1", "title": "R", "kind": "report", "similarity": 0.1, "status": "dropped", "reason": "off_topic"},
        ],
        "thresholds": {
            "min_similarity": {"value": 0.231, "source": "calibrated"},
            "applied": {"entity": 0.231, "chunk": 0.231, "report": 0.17},
        },
    }
    html = entry_card({"params": {"min_similarity": None, "relative_similarity": 0.8}}, trace, {})
    assert "min_similarity (calibrated) 0.231" in html and "report gate 0.170" in html
    assert "0.8 \u00d7 best 0.240" in html


def test_adopt_stores_a_calibration_and_a_rerun_keeps_it(neo4j_cfg, neo4j_config, fake_llm, tmp_path):
    from tests.support.foreign_graphs import EXAMPLES, llm_graph_builder

    fake_llm.responder = index_responder.responder
    cfg = make_config(
        neo4j_config,
        llm={"base_url": fake_llm.base_url, "model": "fake-model", "backoff_base_s": 0.0},
        index={"cache_dir": str(tmp_path / "cache"), "description_max_tokens": 60},
    )
    with open_engine(cfg) as eng:
        llm_graph_builder(
            eng.store, lambda texts: [list(v) for v in eng.embedder.embed(texts)], sorted(EXAMPLES.iterdir())[:2]
        )
        assert read_calibration(eng.store) is None
        eng.adopt(source="llm-graph-builder")
        adopted = read_calibration(eng.store)
        assert (
            adopted is not None
            and adopted.entities == q(eng.store, "MATCH (e:__Entity__) RETURN count(e) AS n")[0]["n"]
        )
        assert calibration.LOWEST <= adopted.min_similarity <= calibration.HIGHEST
        eng.adopt(source="llm-graph-builder")  # nothing new: the stored measurement (and its time) stays
        assert read_calibration(eng.store) == adopted
