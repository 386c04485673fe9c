"""Store-side faults a query must name instead of answering from nothing: indexes ONLINE when a writer
returns, a missing index told from a populating one, chunks without vectors, and basic search's bounded
fetch loop (the small GraphRAG fixture in a real Neo4j, the local embedder, the fake OpenAI server)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from driftgraph import BasicQuery
from driftgraph.api import open_engine
from driftgraph.errors import StoreError
from driftgraph.query.basic import search as basic_search
from driftgraph.store.online import IndexNotOnline, explain_index_error
from tests.conftest import make_config
from tests.support import graphrag_fixture
from tests.support.cypher import q
from tests.support.faults import llm_section

pytestmark = pytest.mark.e2e
QUESTION = "What did Bob build?"


def _cfg(neo4j_cfg: Any, fake: Any, **sections: Any) -> Any:
    return make_config(neo4j_cfg.neo4j.model_dump(), llm=llm_section(fake), **sections)


def test_import_returns_with_every_index_online_and_a_query_at_once_finds_chunks(neo4j_cfg, fake_llm, tmp_path):
    folder = graphrag_fixture.write(tmp_path / "graphrag")
    with open_engine(_cfg(neo4j_cfg, fake_llm)) as eng:
        eng.import_graphrag(folder, embed=True)
        states = {r["name"]: r["state"] for r in q(eng.store, "SHOW INDEXES YIELD name, state")}
        res = eng.query(BasicQuery(question=QUESTION, context_only=True, budget=2000))
    assert {"chunk_embedding", "entity_embedding", "community_embedding", "chunk_fulltext"} <= set(states)
    assert set(states.values()) == {"ONLINE"}, states
    assert res.context.tokens > 0 and "Bob" in res.context.text


def test_chunks_without_vectors_and_a_missing_index_are_named_not_answered(neo4j_cfg, fake_llm, tmp_path):
    folder = graphrag_fixture.write(tmp_path / "graphrag")
    with open_engine(_cfg(neo4j_cfg, fake_llm)) as eng:
        eng.import_graphrag(folder, embed=False)
        with pytest.raises(StoreError, match="3 chunks without embeddings: re-run `driftgraph import-graphrag`"):
            eng.query(BasicQuery(question=QUESTION))
        eng.import_graphrag(folder, embed=True)
        q(eng.store, "DROP INDEX chunk_embedding")
        with pytest.raises(StoreError) as info:
            eng.query(BasicQuery(question=QUESTION))
    message = str(info.value)
    assert "chunk_embedding is missing" in message and "driftgraph import-graphrag" in message, message
    assert "\n" not in message and not isinstance(info.value, IndexNotOnline)
    assert fake_llm.chat_requests() == []  # nothing was answered from an empty context


def test_an_online_index_error_is_left_as_it_is(neo4j_cfg, fake_llm, tmp_path):
    """Only an index that is missing or not ONLINE is explained; another failure keeps its own words."""
    with open_engine(_cfg(neo4j_cfg, fake_llm)) as eng:
        eng.import_graphrag(graphrag_fixture.write(tmp_path / "graphrag"), embed=False)
        err = StoreError("index query failed for another reason")
        assert explain_index_error(eng.store, err, ("chunk_embedding",)) is err
        missing = explain_index_error(eng.store, err, ("no_such_index",))
    assert "no_such_index is missing" in str(missing)


def test_basic_search_fetch_loop_is_bounded(neo4j_cfg, fake_llm, tmp_path, monkeypatch: pytest.MonkeyPatch):
    """k doubles while the room lasts and the index has more, but never more than MAX_FETCHES times."""
    folder: Path = graphrag_fixture.write(tmp_path / "graphrag")
    with open_engine(_cfg(neo4j_cfg, fake_llm, basic={"top_k": 1})) as eng:
        eng.import_graphrag(folder, embed=True)
        free = eng.query(BasicQuery(question=QUESTION, context_only=True, budget=4000))
        monkeypatch.setattr(basic_search, "MAX_FETCHES", 2)
        bounded = eng.query(BasicQuery(question=QUESTION, context_only=True, budget=4000))
    unbounded = free.trace.to_dict()["retrieval"]
    assert unbounded["fetches"] == 3 and unbounded["k"] == 4  # 1, 2, then 4 > the 3 chunks there are
    t = bounded.trace.to_dict()["retrieval"]
    assert t["fetches"] == 2 and t["k"] == 2 and t["vector_hits"] == 2
