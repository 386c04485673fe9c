"""`driftgraph adopt` over graphs other tools built: LLM Graph Builder's and neo4j-graphrag's shapes (real
Neo4j, the real openai client against the fake server, the local embedder). After adopt every original node
and relationship keeps its labels and properties, and all four query modes answer over the graph."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from driftgraph import BasicQuery, DriftQuery, GlobalQuery, LocalQuery
from driftgraph.api import Engine
from driftgraph.errors import AdoptError, InputError
from tests.conftest import make_config
from tests.support import global_fake, index_responder
from tests.support.cli import run_cli
from tests.support.cypher import q
from tests.support.drift_fakes import tree_responder
from tests.support.foreign_graphs import (
    EXAMPLES,
    assert_kept,
    er_reply,
    foreign,
    is_er_request,
    llm_graph_builder,
    llm_graph_builder_communities,
    neo4j_graphrag_pipeline,
    neo4j_graphrag_shape,
    snapshot,
    wipe,
)

pytestmark = pytest.mark.e2e
FILES = sorted(EXAMPLES.iterdir())
_tree = tree_responder(n_follow=1, max_level=1)
TOOL_COMMUNITIES = {"1-0", "0-0", "0-1", "0-2"}


def responder(req: dict[str, Any]) -> str:
    """Extraction-side prompts as the index tests answer them, query prompts as the mode tests do."""
    name = global_fake.schema_name(req)
    content = req["messages"][-1]["content"]
    if name in ("community_report", "extract_graph", "extract_claims") or "Another tool extracted" in content:
        return index_responder.responder(req)
    if name in ("report_ratings", "key_points"):
        return global_fake.responder(req)
    if (name or "").startswith("drift") or "hypothetical report" in content:
        return _tree(req)
    return "A fake answer [Data: Sources (1)]."


@pytest.fixture
def clean(neo4j_config: dict) -> Iterator[dict]:
    from driftgraph.store.db import Store

    cfg = make_config(neo4j_config)
    with Store(cfg.neo4j) as store:
        wipe(store)
    yield neo4j_config
    with Store(cfg.neo4j) as store:
        wipe(store)


@pytest.fixture
def eng(clean, fake_llm, tmp_path) -> Iterator[Engine]:
    fake_llm.responder = responder
    cfg = make_config(
        clean,
        llm={"base_url": fake_llm.base_url, "model": "fake-model", "backoff_base_s": 0.0},
        index={"cache_dir": str(tmp_path / "cache"), "concurrency": 2, "description_max_tokens": 60},
    )
    with Engine(cfg) as e:
        yield e


def _embed(eng: Engine):
    return lambda texts: eng.embed(list(texts))


def _model(eng: Engine) -> dict[str, int]:
    return q(eng.store, """
        RETURN COUNT { (e:__Entity__) WHERE e.id IS NULL OR e.title IS NULL OR e.type IS NULL
                       OR e.description IS NULL OR e.embedding IS NULL OR e.degree IS NULL } AS incomplete_entities,
               COUNT { (c:Chunk) WHERE c.id IS NULL OR c.n_tokens IS NULL OR c.embedding IS NULL
                       OR NOT (c)-[:PART_OF]->(:Document) } AS incomplete_chunks,
               COUNT { (d:Document) WHERE d.id IS NULL OR d.title IS NULL } AS incomplete_documents,
               COUNT { ()-[r:RELATED]->() WHERE r.description IS NULL OR r.weight IS NULL } AS bad_related,
               COUNT { ()-[:RELATED]->() } AS related,
               COUNT { (:Chunk)-[:HAS_ENTITY]->(:__Entity__) } AS mentions,
               COUNT { (c:__Community__) WHERE c.full_content IS NOT NULL AND c.embedding IS NOT NULL } AS reports,
               COUNT { (c:__Community__) WHERE c.community_title IS NOT NULL } AS communities
    """)[0]  # fmt: skip


def _four_modes(eng: Engine, question: str) -> dict[str, Any]:
    local = eng.query(LocalQuery(question=question))
    assert local.answer and local.context.tokens > 0
    basic = eng.query(BasicQuery(question=question))
    assert basic.answer and basic.context.tokens > 0
    glob = eng.query(GlobalQuery(question=question))
    assert glob.answer
    assert glob.trace.to_dict()["map"]["batches"] >= 1
    drift = eng.query(DriftQuery(question=question, max_depth=1))
    assert drift.answer
    return {"local": local, "basic": basic, "global": glob, "drift": drift}


def test_llm_graph_builder_graph_is_adopted_without_changing_it(eng, fake_llm):
    llm_graph_builder(eng.store, _embed(eng), FILES[:3])
    llm_graph_builder_communities(eng.store, _embed(eng))
    before = snapshot(eng.store)
    s = eng.adopt()
    assert s.source == "llm-graph-builder" and s.failures.count == 0
    assert s.documents == 3 and s.entities > 10 and s.relationships > 5
    assert s.communities > 0 and s.reports == s.communities
    assert s.reused_vectors.chunk == s.chunks and 0 < s.reused_vectors.entity < s.entities
    # LLM Graph Builder's own `vector`, `entity_vector` and `keyword` indexes cover Chunk.embedding,
    # __Entity__.embedding and Chunk.text, so ours of the same purpose sit on alias labels
    assert set(s.aliased_indexes) == {"chunk_embedding", "entity_embedding", "chunk_fulltext", "community_embedding"}
    m = _model(eng)
    assert m["incomplete_entities"] == m["incomplete_chunks"] == m["incomplete_documents"] == m["bad_related"] == 0
    assert m["reports"] == m["communities"] == s.communities
    described = s.added.descriptions
    assert described == s.entities - s.reused_vectors.entity, "only entities without a description"
    after = snapshot(eng.store)
    assert_kept(before, after)
    # synonym edges are drawn here too, and the name vector and the mark are listed as driftgraph's
    syn = s.added.synonyms
    assert syn.skipped is None and syn.names_embedded == syn.entities_linked == s.entities
    unlisted = q(eng.store, "MATCH (e:__Entity__) WHERE NOT ('name_embedding' IN e.driftgraph_props "
                            "AND 'synonyms_at' IN e.driftgraph_props) RETURN count(e) AS n")[0]["n"]  # fmt: skip
    assert unlisted == 0
    # the other tool's descriptions stay, ours are summaries of the chunks
    own = q(eng.store, "MATCH (e:__Entity__) WHERE e.description ENDS WITH 'described by the other tool.' "
                       "RETURN count(e) AS n, sum(size(e.driftgraph_props)) AS owned")[0]  # fmt: skip
    assert own["n"] == s.reused_vectors.entity
    res = _four_modes(eng, "Who runs the Marrow Bay Shipyard?")
    # LLM Graph Builder's own communities have no driftgraph report: global drops them, saying why
    dropped = {r["id"]: r["reason"] for r in res["global"].trace.to_dict()["reports"] if r["id"] in TOOL_COMMUNITIES}
    assert dropped == dict.fromkeys(TOOL_COMMUNITIES, "no_report")
    primer = {r["id"] for r in res["drift"].trace.to_dict()["primer"]["reports"]}
    assert primer and not primer & TOOL_COMMUNITIES

    # a re-run with nothing new costs nothing and changes nothing
    calls = len(fake_llm.chat_requests())
    settled = snapshot(eng.store)
    again = eng.adopt(source="llm-graph-builder")
    assert again.llm_calls == 0 and len(fake_llm.chat_requests()) == calls
    assert again.added.reports_reused == again.communities
    assert sum(again.added.embedded.values()) == 0
    assert snapshot(eng.store) == settled


def test_llm_graph_builder_incremental_after_the_tool_adds_a_document(eng, fake_llm):
    llm_graph_builder(eng.store, _embed(eng), FILES[:2])
    first = eng.adopt()
    llm_graph_builder(eng.store, _embed(eng), FILES[2:3])
    tool_added = snapshot(eng.store)
    n = len(fake_llm.chat_requests())
    s = eng.adopt()
    assert s.documents == 3 and s.chunks > first.chunks and s.entities > first.entities
    assert 0 < s.added.descriptions < s.entities - s.reused_vectors.entity
    assert s.added.reports_reused > 0 or s.added.communities.kept > 0
    assert s.added.embedded["chunk"] == 0, "the tool's own chunk vectors are reused"
    new_prompts = [r["messages"][0]["content"] for r in fake_llm.chat_requests()[n:]]
    assert new_prompts and s.llm_calls == len(new_prompts)
    assert_kept(foreign(tool_added), snapshot(eng.store))
    m = _model(eng)
    assert m["incomplete_entities"] == m["incomplete_chunks"] == 0 and m["reports"] == m["communities"]
    # `index` would delete the other tool's documents as removed files (and --reset all of its graph)
    kept = snapshot(eng.store)
    for reset in (False, True):
        with pytest.raises(InputError, match="llm-graph-builder built and driftgraph adopted"):
            eng.index(EXAMPLES, reset=reset)
    assert snapshot(eng.store) == kept


def test_neo4j_graphrag_shape_is_adopted_and_its_vector_retriever_still_works(eng, monkeypatch, tmp_path):
    from neo4j_graphrag.indexes import create_vector_index

    neo4j_graphrag_shape(eng.store, _embed(eng), FILES)
    driver = eng.store._driver
    create_vector_index(driver, "ngr_chunks", label="Chunk", embedding_property="embedding", dimensions=384,
                        similarity_fn="cosine")  # fmt: skip
    before = snapshot(eng.store)
    s = eng.adopt()
    assert s.source == "neo4j-graphrag" and s.failures.count == 0
    assert s.added.linked["add_ids"] == len(before["nodes"]), "documents, chunks and entities had no id"
    assert s.added.linked["part_of"] == s.chunks and s.added.linked["has_entity"] > 0
    assert s.aliased_indexes == ("chunk_embedding",)
    assert s.communities > 0 and s.reports == s.communities
    m = _model(eng)
    assert m["incomplete_entities"] == m["incomplete_chunks"] == m["incomplete_documents"] == m["bad_related"] == 0
    assert_kept(before, snapshot(eng.store))
    titles = q(eng.store, "MATCH (d:Document) RETURN d.title AS t ORDER BY t")
    assert [r["t"] for r in titles] == [p.name for p in FILES]
    _vector_retriever_still_works(eng)  # the four modes run over the graph the real builder wrote (below)
    _readme_vector_cypher_retriever_reads_our_index(eng.config, monkeypatch, tmp_path)


def _vector_retriever_still_works(eng: Engine) -> None:
    from neo4j_graphrag.embeddings.base import Embedder
    from neo4j_graphrag.retrievers import VectorRetriever

    class Same(Embedder):  # the model the chunks were embedded with
        def embed_query(self, text: str) -> list[float]:
            return [float(x) for x in eng.embed([text])[0]]

    hits = VectorRetriever(eng.store._driver, "ngr_chunks", Same()).search(query_text="lantern festival", top_k=3)
    assert len(hits.items) == 3
    assert "lantern" in str(hits.items[0].content).lower()


def readme_block(marker: str) -> str:
    """The python block of the adopting guide (docs/guides/adopting.md) that contains ``marker``."""
    text = (EXAMPLES.parents[1] / "docs" / "guides" / "adopting.md").read_text(encoding="utf-8")
    blocks = [b.split("```", 1)[0] for b in text.split("```python\n")[1:]]
    return next(b for b in blocks if marker in b)


def _readme_vector_cypher_retriever_reads_our_index(cfg: Any, monkeypatch: Any, tmp_path: Any) -> None:
    import yaml

    neo = cfg.neo4j
    for key, value in {"NEO4J_URI": neo.uri, "NEO4J_USERNAME": neo.username, "NEO4J_PASSWORD": neo.password,
                       "NEO4J_DATABASE": neo.database}.items():  # fmt: skip
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "driftgraph.yaml").write_text(yaml.safe_dump({"embeddings": {"threads": 1}}))
    scope: dict[str, Any] = {"print": lambda *a: None}
    exec(readme_block("VectorCypherRetriever("), scope)  # noqa: S102 - the guide's own example
    items = scope["result"].items
    assert len(items) == 3
    texts = [str(i.content) for i in items]  # the default formatter: the record's repr
    assert all(f"{k}=" in t for t in texts for k in ("title", "description", "relations", "reports", "chunks"))
    assert any("relations=['" in t for t in texts), texts
    assert any("reports=['" in t for t in texts), texts


def test_refuses_what_it_cannot_adopt(eng):
    with pytest.raises(AdoptError, match="no neo4j-graphrag or LLM Graph Builder graph"):
        eng.adopt()
    llm_graph_builder(eng.store, _embed(eng), FILES[:1])
    with pytest.raises(AdoptError, match="no neo4j-graphrag graph"):
        eng.adopt(source="neo4j-graphrag")
    q(eng.store, "MATCH (c:Chunk) WITH c LIMIT 1 CALL db.create.setNodeVectorProperty(c, 'embedding', [1.0, 0.0])")
    with pytest.raises(AdoptError, match="2/384-d vectors written by llm-graph-builder"):
        eng.adopt()


def test_cli_adopt_json(eng, neo4j_config, fake_llm, tmp_path):
    import yaml

    llm_graph_builder(eng.store, _embed(eng), FILES[:1])
    conf = {"llm": {"model": "fake-model", "backoff_base_s": 0.0}, "embeddings": {"threads": 1}}
    (tmp_path / "driftgraph.yaml").write_text(yaml.safe_dump(conf))
    res = run_cli(["adopt", "--from", "llm-graph-builder", "--json"], neo4j_config, fake_llm, tmp_path)
    assert res.returncode == 0, res.stderr
    s = json.loads(res.stdout)
    assert s["source"] == "llm-graph-builder" and s["reports"] == s["communities"] > 0
    text = run_cli(["adopt"], neo4j_config, fake_llm, tmp_path)
    assert text.returncode == 0, text.stderr
    assert "adopted a llm-graph-builder graph" in text.stdout and "LLM calls 0" in text.stdout
    bad = run_cli(["adopt", "--from", "nonsense"], neo4j_config, fake_llm, tmp_path)
    assert bad.returncode != 0 and len(bad.stderr.strip().splitlines()) == 1 and "--from" in bad.stderr


def test_cli_adopt_exits_3_when_reports_fail_unless_allowed(eng, neo4j_config, fake_llm, tmp_path):
    import yaml

    def no_reports(req: dict[str, Any]) -> str:
        """Every community report (and its repair) comes back without JSON: adopt finishes, with failures."""
        return "this is not JSON at all" if global_fake.schema_name(req) == "community_report" else responder(req)

    llm_graph_builder(eng.store, _embed(eng), FILES[:1])
    conf = {"llm": {"model": "fake-model", "backoff_base_s": 0.0}, "embeddings": {"threads": 1}}
    (tmp_path / "driftgraph.yaml").write_text(yaml.safe_dump(conf))
    fake_llm.responder = no_reports
    res = run_cli(["adopt", "--json"], neo4j_config, fake_llm, tmp_path)
    assert res.returncode == 3, res.stderr
    failures = json.loads(res.stdout)["failures"]
    assert failures["reports"] and failures["count"] == len(failures["reports"]) + len(failures["descriptions"])
    assert res.stderr.strip().splitlines() == [
        f"adopt finished with {failures['count']} failures (listed above; the next run retries them): exit 3"
    ]
    allowed = run_cli(["adopt", "--allow-failures"], neo4j_config, fake_llm, tmp_path)
    assert allowed.returncode == 0, allowed.stderr
    assert f"failures: {failures['count']}" in allowed.stdout and allowed.stderr == ""
    fake_llm.responder = responder  # healed: the failed reports were not cached, the next run makes them
    healed = run_cli(["adopt", "--json"], neo4j_config, fake_llm, tmp_path)
    assert healed.returncode == 0, healed.stderr
    assert json.loads(healed.stdout)["failures"]["count"] == 0


def test_graph_built_by_neo4j_graphrags_own_kg_builder(eng, fake_llm):
    """examples/docs through neo4j-graphrag's own components; its Neo4jWriter needs APOC (the launcher has it)."""
    from neo4j_graphrag.indexes import create_vector_index

    fake_llm.responder = lambda req: er_reply(req) if is_er_request(req) else responder(req)
    driver = eng.store._driver
    results = neo4j_graphrag_pipeline(driver, _embed(eng), fake_llm.base_url, FILES[:3])
    assert [r.status for r in results] == ["SUCCESS"] * 3, [r.metadata for r in results]
    create_vector_index(driver, "ngr_chunks", label="Chunk", embedding_property="embedding", dimensions=384,
                        similarity_fn="cosine")  # fmt: skip
    built = snapshot(eng.store)
    assert {t for t, *_ in built["rels"].values()} >= {"FROM_DOCUMENT", "NEXT_CHUNK", "FROM_CHUNK"}
    s = eng.adopt()
    assert s.source == "neo4j-graphrag" and s.failures.count == 0
    assert s.documents == 3 and s.relationships > 5 and s.reports == s.communities > 0
    assert s.reused_vectors.chunk == s.chunks and s.aliased_indexes == ("chunk_embedding",)
    m = _model(eng)
    assert m["incomplete_entities"] == m["incomplete_chunks"] == m["incomplete_documents"] == m["bad_related"] == 0
    assert_kept(built, snapshot(eng.store))
    _four_modes(eng, "Who runs the Marrow Bay Shipyard?")
    _vector_retriever_still_works(eng)

    # the tool adds a document; adopt again: only the new part costs LLM calls, nothing of the tool's changes
    results = neo4j_graphrag_pipeline(driver, _embed(eng), fake_llm.base_url, FILES[3:])
    assert [r.status for r in results] == ["SUCCESS"]
    grown = foreign(snapshot(eng.store))
    again = eng.adopt()
    assert again.documents == 4 and again.chunks > s.chunks
    assert 0 < again.added.descriptions < again.entities
    assert again.added.linked["add_ids"] > 0 and again.added.embedded["chunk"] == 0
    assert_kept(grown, snapshot(eng.store))


def test_import_graphrag_and_index_never_delete_a_foreign_graph(eng, neo4j_config, fake_llm, tmp_path):
    """A reset deletes every Document, Chunk and __Entity__, the other tool's too: refused, adopted or not."""
    from tests.support import graphrag_fixture

    folder = graphrag_fixture.write(tmp_path / "graphrag")
    neo4j_graphrag_shape(eng.store, _embed(eng), FILES[:1])  # not adopted yet: no DriftgraphMeta at all
    for args in (["import-graphrag", str(folder), "--reset"], ["import-graphrag", str(folder)]):
        before = snapshot(eng.store)
        res = run_cli(args, neo4j_config, fake_llm, tmp_path)
        lines = res.stderr.strip().splitlines()
        assert res.returncode == 1 and len(lines) == 1, res.stderr
        assert "a graph that neo4j-graphrag built" in lines[0] and "NEO4J_DATABASE" in lines[0]
        assert ("would delete it" in lines[0]) == ("--reset" in args)
        assert snapshot(eng.store) == before
    with pytest.raises(InputError, match="a graph that neo4j-graphrag built, which `index --reset` would delete"):
        eng.index(EXAMPLES, reset=True)
    wipe(eng.store)
    llm_graph_builder(eng.store, _embed(eng), FILES[:1])
    eng.adopt()
    adopted = snapshot(eng.store)
    for reset in (True, False):
        with pytest.raises(InputError, match="llm-graph-builder built and driftgraph adopted"):
            eng.import_graphrag(folder, reset=reset)
    assert snapshot(eng.store) == adopted
    # driftgraph's own import is still replaced by --reset (its PART_OF / HAS_ENTITY are not a foreign shape)
    wipe(eng.store)
    eng.import_graphrag(folder)
    again = eng.import_graphrag(folder, reset=True)
    assert again.counts.documents == 2
