"""import-graphrag / export-graphrag against a real Neo4j: a tiny synthetic index (every data problem) and
the real operation-dulce index (counts, ids, embeddings, re-import no-op, export round trip)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from driftgraph import ImportSummary
from driftgraph.api import open_engine
from driftgraph.importers.graphrag import GraphragFormatError
from driftgraph.store.schema import describe_indexes
from tests.support import graphrag_fixture as fx
from tests.support.cypher import q as _q

DULCE_COUNTS = {"Document": 1, "Chunk": 5, "__Entity__": 39, "__Community__": 10, "Claim": 41}


def _import(cfg, path: Path, **kw) -> ImportSummary:
    kw.setdefault("embed", False)
    with open_engine(cfg) as eng:
        return eng.import_graphrag(path, **kw)


def _counts(store) -> dict:
    return store.read("admin/counts")[0]


# -- synthetic index: the graph model -----------------------------------------------------------------------
def test_synthetic_index_fills_the_graph_model(neo4j_cfg, store, tmp_path):
    summary = _import(neo4j_cfg, fx.write(tmp_path / "idx"))
    assert summary.counts.to_dict() == {"Document": 2, "Chunk": 3, "__Entity__": 4, "__Community__": 3, "Claim": 1}
    assert summary.relationships == 3 and summary.warnings == {}
    assert summary.embedded is None
    # chunk order follows documents.text_unit_ids (t2 before t1), NEXT_CHUNK within a document only
    nexts = _q(store, "MATCH (a:Chunk)-[:NEXT_CHUNK]->(b) RETURN a.id AS a, b.id AS b")
    assert nexts == [{"a": "t2", "b": "t1"}]
    part_of = _q(store, "MATCH (c:Chunk)-[:PART_OF]->(d:Document) RETURN c.id AS c, d.id AS d ORDER BY c")
    assert [(r["c"], r["d"]) for r in part_of] == [("t1", "d1"), ("t2", "d1"), ("t3", "d2")]
    # membership at every level, hierarchy child -> parent, report on the community node
    members = _q(store, "MATCH (e:__Entity__ {id: 'e2'})-[:IN_COMMUNITY]->(c) RETURN c.community AS n ORDER BY n")
    assert [m["n"] for m in members] == [0, 2]
    assert _q(store, "MATCH (c)-[:PARENT]->(p) RETURN c.id AS c, p.id AS p") == [{"c": "k2", "p": "k0"}]
    k0 = _q(store, "MATCH (c:__Community__ {id: 'k0'}) RETURN c {.*} AS c")[0]["c"]
    assert k0["title"] == "Report 0" and k0["community_title"] == "Community 0" and k0["report_id"] == "rep0"
    assert json.loads(k0["findings"]) == [{"summary": "F0", "explanation": "because"}]
    assert k0["rank"] == 5.0 and k0["n_tokens"] > 0
    # RELATED keeps GraphRAG's id and fields; endpoints mapped from titles to ids
    rel = _q(store, "MATCH (s)-[r:RELATED {id: 'r2'}]->(t) RETURN s.id AS s, t.id AS t, r {.*} AS r")[0]
    assert (rel["s"], rel["t"]) == ("e2", "e4")
    assert rel["r"]["weight"] == 2.0 and rel["r"]["text_unit_ids"] == ["t1"] and rel["r"]["n_tokens"] > 0
    # claims: ABOUT the subject entity, FOUND_IN the chunk
    claim = _q(store, "MATCH (c:Claim)-[:ABOUT]->(e), (c)-[:FOUND_IN]->(t) RETURN e.id AS e, t.id AS t")
    assert claim == [{"e": "e1", "t": "t2"}]
    # HAS_ENTITY from entity text_unit_ids; n_tokens on every chunk, entity, relationship and report
    assert _q(store, "MATCH (:Chunk)-[h:HAS_ENTITY]->() RETURN count(h) AS n")[0]["n"] == 6
    missing = _q(
        store,
        "MATCH (n) WHERE (n:Chunk OR n:__Entity__ OR n:__Community__) AND n.n_tokens IS NULL RETURN count(n) AS n",
    )
    assert missing[0]["n"] == 0
    ent = _q(store, "MATCH (e:__Entity__ {id: 'e1'}) RETURN e {.*} AS e")[0]["e"]
    assert ent["human_readable_id"] == 0 and ent["degree"] == 2 and ent["frequency"] == 2


def test_reimport_is_a_noop_and_reset_clears(neo4j_cfg, store, tmp_path):
    first = _import(neo4j_cfg, fx.write(tmp_path / "a"))
    before = _counts(store)
    rels = _q(store, "MATCH ()-[r]->() RETURN type(r) AS t, count(r) AS n ORDER BY t")
    again = _import(neo4j_cfg, tmp_path / "a")
    assert _counts(store) == before and again.counts == first.counts
    assert _q(store, "MATCH ()-[r]->() RETURN type(r) AS t, count(r) AS n ORDER BY t") == rels
    other = fx.tables()
    other["documents"] = other["documents"][:1]
    other["text_units"] = other["text_units"][:2]
    del other["covariates"]
    _import(neo4j_cfg, fx.write(tmp_path / "b", other), reset=True)
    counts = _counts(store)
    assert counts["documents"] == 1 and counts["chunks"] == 2 and counts["claims"] == 0


def test_interrupted_import_can_be_rerun(neo4j_cfg, store, tmp_path):
    class Crash(Exception):
        pass

    class CrashAfterEntities:
        def task(self, name, total):
            def tick(n):
                if name == "relationships":
                    raise Crash

            return tick

    path = fx.write(tmp_path / "idx")
    with pytest.raises(Crash):
        _import(neo4j_cfg, path, batch_size=1, progress=CrashAfterEntities())
    partial = _counts(store)
    assert partial["entities"] == 4 and partial["relationships"] == 1 and partial["communities"] == 0
    summary = _import(neo4j_cfg, path, batch_size=1)
    assert summary.counts.communities == 3 and summary.relationships == 3


def test_old_create_final_names_and_columns(neo4j_cfg, tmp_path):
    data = fx.tables()
    for u in data["text_units"]:
        u["document_ids"] = [u.pop("document_id")]
    for e in data["entities"]:
        e["name"] = e.pop("title")
        del e["degree"], e["frequency"]
    for c in data["communities"]:
        del c["parent"], c["children"]
    summary = _import(neo4j_cfg, fx.write(tmp_path / "old", data, prefix="create_final_"))
    assert summary.counts.entities == 4 and summary.counts.chunks == 3
    assert summary.tables["entities"].file == "create_final_entities.parquet"
    assert summary.warnings == {"communities_without_parent_column": 1}


# -- data problems: hard errors (nothing written) ----------------------------------------------------------
def _assert_nothing_written(store) -> None:
    assert all(v == 0 for v in _counts(store).values())


def test_missing_folder_and_missing_file(neo4j_cfg, store, tmp_path):
    with pytest.raises(GraphragFormatError, match="no such folder"):
        _import(neo4j_cfg, tmp_path / "nope")
    path = fx.write(tmp_path / "idx")
    (path / "entities.parquet").unlink()
    with pytest.raises(GraphragFormatError, match=r"missing entities\.parquet \(or create_final_entities"):
        _import(neo4j_cfg, path)
    _assert_nothing_written(store)


def test_missing_and_mistyped_column_name_file_and_column(neo4j_cfg, store, tmp_path):
    data = fx.tables()
    for r in data["relationships"]:
        del r["target"]
    path = fx.write(tmp_path / "a", data)
    with pytest.raises(GraphragFormatError, match=r"relationships\.parquet: missing column 'target'"):
        _import(neo4j_cfg, path)
    data = fx.tables()
    for i, c in enumerate(data["communities"]):
        c["level"] = f"level {i}"
    path = fx.write(tmp_path / "b", data)
    with pytest.raises(
        GraphragFormatError, match=r"communities\.parquet: column 'level' has type string, expected int"
    ):
        _import(neo4j_cfg, path)
    _assert_nothing_written(store)


def test_duplicate_ids_fail_before_writing(neo4j_cfg, store, tmp_path):
    data = fx.tables()
    data["entities"][3]["id"] = "e1"
    with pytest.raises(GraphragFormatError, match=r"entities\.parquet: duplicate id 'e1'"):
        _import(neo4j_cfg, fx.write(tmp_path / "a", data))
    data = fx.tables()
    data["communities"][2]["community"] = 1
    with pytest.raises(GraphragFormatError, match=r"communities\.parquet: duplicate community 1"):
        _import(neo4j_cfg, fx.write(tmp_path / "b", data))
    _assert_nothing_written(store)


# -- data problems: counted warnings ------------------------------------------------------------------------
def test_empty_titles_and_dangling_endpoints_are_counted_and_skipped(neo4j_cfg, tmp_path):
    data = fx.tables()
    data["entities"][2]["title"] = ""  # CY: its relationship r3 and community membership go too
    data["entities"][3]["title"] = None
    data["relationships"].append(
        {
            "id": "r9",
            "human_readable_id": 9,
            "source": "ADA",
            "target": "NOBODY",
            "description": "x",
            "weight": 1.0,
            "combined_degree": 1,
            "text_unit_ids": [],
        }
    )
    summary = _import(neo4j_cfg, fx.write(tmp_path / "idx", data))
    assert summary.warnings["entities_without_title"] == 2
    assert summary.warnings["relationships_unknown_endpoint"] == 3  # r2 (ENGINES), r3 (CY), r9 (NOBODY)
    # nothing is lost: each unknown endpoint is kept as a flagged placeholder entity (not counted as an entity)
    assert summary.counts.entities == 2 and summary.relationships == 4
    assert len(summary.placeholder_entities) == 3 and "NOBODY" in summary.placeholder_entities
    rels = summary.tables["relationships"]
    assert (rels.file, rels.rows, rels.written, rels.skipped) == ("relationships.parquet", 4, 4, 0)
    assert "NOBODY" in " ".join(summary.warning_examples["relationships_unknown_endpoint"])


def test_missing_parent_community_is_a_warning(neo4j_cfg, store, tmp_path):
    data = fx.tables()
    data["communities"][2]["parent"] = 7
    summary = _import(neo4j_cfg, fx.write(tmp_path / "idx", data))
    assert summary.warnings == {"communities_missing_parent": 1}
    assert summary.counts.communities == 3
    assert _q(store, "MATCH ()-[p:PARENT]->() RETURN count(p) AS n")[0]["n"] == 0


def test_precomputed_embeddings_of_another_model_are_not_used(neo4j_cfg, store, tmp_path):
    """A matching dimension is not enough (tests/test_import_provenance.py: the embedder's own vectors are used)."""
    path = fx.write(tmp_path / "idx")
    vec = [1.0] + [0.0] * 383
    fx.write_table(
        path / "embeddings.entity_description.parquet",
        [{"id": e, "embedding": vec} for e in ("e1", "e2", "e3", "e4")],
    )
    fx.write_table(path / "embeddings.community_full_content.parquet", [{"id": "rep0", "embedding": [0.5] * 8}])
    summary = _import(neo4j_cfg, path, embed=True)
    emb = summary.embedded.kinds
    assert emb["entity"].precomputed == 0 and emb["entity"].embedded == 4
    assert "are not" in emb["entity"].note and "re-embedded" in emb["entity"].note
    assert emb["chunk"].embedded == 3 and emb["community"].embedded == 3
    assert "8-d" in emb["community"].note and "re-embedded" in emb["community"].note
    assert summary.warnings == {"embeddings_wrong_dimension": 1, "embeddings_other_model": 1}
    stored = _q(store, "MATCH (e:__Entity__ {id: 'e3'}) RETURN e.embedding[0] AS x, size(e.embedding) AS n")
    assert stored[0]["n"] == 384 and stored[0]["x"] != 1.0
    again = _import(neo4j_cfg, path, embed=True)  # nothing left to embed: a no-op for the embedder
    assert [again.embedded.kinds[k].embedded for k in ("entity", "chunk", "community")] == [0, 0, 0]


def test_cli_json_summary_and_one_line_errors(neo4j_cfg, tmp_path):
    env = {
        **os.environ,
        "NEO4J_URI": neo4j_cfg.neo4j.uri,
        "NEO4J_USERNAME": neo4j_cfg.neo4j.username,
        "NEO4J_PASSWORD": neo4j_cfg.neo4j.password,
    }
    path = fx.write(tmp_path / "idx")
    cmd = [
        sys.executable,
        "-m",
        "driftgraph",
        "import-graphrag",
        str(path),
        "--json",
        "--no-embed",
        "--batch-size",
        "2",
    ]
    res = subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    summary = json.loads(res.stdout)
    assert summary["counts"]["__Entity__"] == 4 and set(summary) >= {"counts", "relationships", "embedded", "seconds"}
    (path / "communities.parquet").unlink()
    res = subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert res.returncode == 1 and "missing communities.parquet" in res.stderr and "Traceback" not in res.stderr


# -- the real operation-dulce index -------------------------------------------------------------------------
def test_operation_dulce_import_embeddings_and_noop_reimport(neo4j_cfg, store, shared_data):
    dulce = shared_data / "operation-dulce"
    summary = _import(neo4j_cfg, dulce, embed=True)
    assert summary.counts.to_dict() == DULCE_COUNTS
    # two relationships of the real index name entities that its entities table does not hold: kept, with
    # placeholder entities (flagged, counted apart)
    assert summary.relationships == 107 and summary.warnings["relationships_unknown_endpoint"] == 2
    assert len(summary.placeholder_entities) == 2
    assert summary.warnings["documents_unknown_text_units"] == 1
    ids = {r["id"] for r in _q(store, "MATCH (e:__Entity__) WHERE e.placeholder IS NULL RETURN e.id AS id")}
    assert ids == set(pq.read_table(dulce / "entities.parquet", columns=["id"]).column(0).to_pylist())
    assert _q(store, "MATCH (e:__Entity__ {placeholder: true}) RETURN count(e) AS n")[0]["n"] == 2
    emb = summary.embedded.kinds
    assert (emb["entity"].embedded, emb["chunk"].embedded, emb["community"].embedded) == (41, 5, 10)
    assert "3072-d" in emb["community"].note and "384-d" in emb["community"].note
    indexes = describe_indexes(store)
    assert {n: indexes[n]["dimensions"] for n in ("entity_embedding", "chunk_embedding", "community_embedding")} == {
        "entity_embedding": 384,
        "chunk_embedding": 384,
        "community_embedding": 384,
    }
    assert _q(store, "MATCH ()-[p:PARENT]->() RETURN count(p) AS n")[0]["n"] == 3
    before = _counts(store)
    again = _import(neo4j_cfg, dulce, embed=True)
    assert _counts(store) == before
    assert [again.embedded.kinds[k].embedded for k in ("entity", "chunk", "community")] == [0, 0, 0]


def test_operation_dulce_export_round_trip(neo4j_cfg, shared_data, tmp_path):
    dulce = shared_data / "operation-dulce"
    _import(neo4j_cfg, dulce)
    out = tmp_path / "export"
    with open_engine(neo4j_cfg) as eng:
        result = eng.export_graphrag(out)
    assert result.rows["entities"] == 39 and result.rows["relationships"] == 107  # all that came in

    def load(folder: Path, name: str) -> dict[str, dict]:
        return {r["id"]: r for r in pq.read_table(folder / f"{name}.parquet").to_pylist()}

    text_fields = {
        "documents": ["human_readable_id", "title", "text", "creation_date"],
        "text_units": ["human_readable_id", "text", "document_id"],
        "entities": ["human_readable_id", "title", "type", "description", "frequency", "degree"],
        "relationships": ["human_readable_id", "source", "target", "description", "weight", "combined_degree"],
        "communities": ["human_readable_id", "community", "level", "parent", "children", "title", "size"],
        "community_reports": [
            "human_readable_id",
            "community",
            "level",
            "parent",
            "children",
            "title",
            "summary",
            "full_content",
            "rank",
            "rating_explanation",
            "full_content_json",
        ],
        "covariates": [
            "human_readable_id",
            "type",
            "description",
            "subject_id",
            "object_id",
            "status",
            "source_text",
            "text_unit_id",
        ],
    }
    for name, fields in text_fields.items():
        original, exported = load(dulce, name), load(out, name)
        assert exported.keys() == original.keys(), name  # every id of every table, the dangling two too
        for key, row in original.items():
            for f in fields:
                assert exported[key][f] == row[f], (name, key, f)
    for key, row in load(dulce, "community_reports").items():
        assert load(out, "community_reports")[key]["findings"] == [
            {"summary": f["summary"], "explanation": f["explanation"]} for f in row["findings"]
        ]
    for name in ("entities", "communities"):
        original, exported = load(dulce, name), load(out, name)
        for key, row in original.items():
            id_list = "entity_ids" if name == "communities" else "text_unit_ids"
            assert set(exported[key][id_list]) == set(row[id_list]), (name, key)
    # dulce's documents.parquet lists text unit ids that are not in text_units.parquet (counted on import);
    # the export lists the document's real chunks in text_units order
    chunks = sorted(load(dulce, "text_units").values(), key=lambda r: r["human_readable_id"])
    assert next(iter(load(out, "documents").values()))["text_unit_ids"] == [c["id"] for c in chunks]
    # and the exported folder imports again, unchanged
    summary = _import(neo4j_cfg, out, reset=True)
    assert summary.counts.to_dict() == DULCE_COUNTS and summary.relationships == 107
    assert pa.types.is_list(pq.read_schema(out / "community_reports.parquet").field("findings").type)
