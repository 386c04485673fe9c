"""Multi-hop bridge, the named-entity bypass rules and the reranker hook.

The bridge runs against a real Neo4j on a three-chunk chain (t3 -ADA- t2 -BOB- t1); the reranker against a
fake ``/rerank`` server (``endpoint``) and the fake OpenAI server through the real openai client (``llm``).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from driftgraph.api import open_engine
from driftgraph.config import LocalConfig, RerankConfig
from driftgraph.errors import RerankError
from driftgraph.query.budget import Candidate
from driftgraph.query.local.entry import named_rule, select_entry
from driftgraph.query.local.neighbourhood import Neighbourhood
from driftgraph.query.local.rank import score_chunks
from driftgraph.query.local.search import LocalAsk, build_local_context
from driftgraph.query.rerank import renumber, rerank_chunks
from driftgraph.runtime import Runtime
from tests.conftest import make_config
from tests.support import graphrag_fixture
from tests.support.fake_rerank import FakeRerank

PRESENT = {"chunk": True, "entity": True, "relationship": True, "report": False, "claim": False}


# -- the named-entity bypass (issue 18 item 4) ----------------------------------------------------------------
def test_named_rule_accepts_specific_names_only() -> None:
    q = "Which country holds the waterfall near Nugegoda that Lake Geneva feeds?"
    assert named_rule("country", q, df=900, rare_chunks=5) is None  # a generic noun, common in the corpus
    assert named_rule("waterfall", q, df=40, rare_chunks=5) is None
    assert named_rule("Lake Geneva", q, df=300, rare_chunks=5) == "named_multiword"
    assert named_rule("NUGEGODA", q, df=300, rare_chunks=5) == "named_capitalised"
    assert named_rule("waterfall", q, df=3, rare_chunks=5) == "named_rare"
    # the question's first word is capitalised by grammar, not because it names something
    assert named_rule("which", "Which river?", df=900, rare_chunks=5) is None


def test_generic_noun_faces_the_thresholds_and_the_trace_says_which_rule_kept_each_entity() -> None:
    s = LocalConfig(min_similarity=0.4, relative_similarity=0.5, named_rare_chunks=5)
    row = {
        "entity_vector": [
            {"id": "a", "title": "ANGEL FALLS", "similarity": 0.2, "df": 40},
            {"id": "c", "title": "COUNTRY", "similarity": 0.156, "df": 800},
            {"id": "v", "title": "VENEZUELA", "similarity": 0.6, "df": 60},
        ],
        "entity_fulltext": [],
        "chunk_vector": [],
        "chunk_count": 1000,
        "present": PRESENT,
    }
    out = select_entry(row, s, (), "Which country is Angel Falls in?")
    by_id = {c.id: c for c in out.candidates}
    assert by_id["a"].status == "kept" and by_id["a"].rule == "named_multiword"
    assert by_id["c"].status == "dropped" and by_id["c"].reason == "below_threshold" and by_id["c"].named
    assert by_id["c"].rule is None
    assert by_id["v"].status == "kept" and by_id["v"].rule == "similarity"


# -- bridge scoring (pure) -------------------------------------------------------------------------------------
def test_a_bridged_chunk_records_its_hop_and_path() -> None:
    s = LocalConfig(bridge_weight=0.2)
    row = {
        "entity_vector": [],
        "entity_fulltext": [],
        "chunk_vector": [{"id": "t3", "similarity": 0.7}],
        "chunk_count": 100,
        "present": PRESENT,
    }
    entry = select_entry(row, s, ())
    x = {
        "chunks": [{"id": "t3", "similarity": 0.7}, {"id": "t2", "similarity": 0.1}, {"id": "t1", "similarity": 0.05}],
        "seed_links": [{"chunk": "t2", "entity": "e1", "title": "ADA", "df": 2, "via": "t3"}],
        "entity_links": [],
        "bridge_links": [
            {
                "chunk": "t1",
                "entity": "e2",
                "title": "BOB",
                "df": 2,
                "via": "t2",
                "hop": 3,
                "weight": 0.3,
                "path": "ADA > BOB",
            }
        ],
    }
    scored = {c.id: c for c in score_chunks(Neighbourhood.of(x), entry, s)}
    assert (scored["t3"].hop, scored["t3"].depth) == ("vector", 1)
    assert (scored["t2"].hop, scored["t2"].depth, scored["t2"].via) == ("seed_hop", 2, "ADA")
    assert (scored["t1"].hop, scored["t1"].depth, scored["t1"].via) == ("bridge", 3, "ADA > BOB")
    assert scored["t1"].support == pytest.approx(0.2 * 0.3)


# -- the bridge against Neo4j ----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def chain(neo4j_config: dict, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The fixture's tiny index (its chunks chain t3 -ADA- t2 -BOB- t1), imported once for this module."""
    return graphrag_fixture.import_chain(make_config(neo4j_config), tmp_path_factory.mktemp("chain"))


def _context(cfg: Any, **local: Any) -> Any:
    settings = LocalConfig(chunk_top_k=1, seed_chunks=1, entity_chunks=0, ranking="score", **local)
    with open_engine(cfg) as eng:
        return build_local_context(
            eng.runtime.for_run(), LocalAsk("What did Cy write about Ada?", budget=2000), settings
        )


def test_the_third_hop_comes_from_the_chunk_the_second_hop_found(chain) -> None:
    ctx = _context(chain, max_hops=3)
    items = {i.id: i for i in ctx.recorder.items if i.source == "chunk"}
    assert (items["t3"].depth, items["t3"].hop) == (1, "vector")
    assert (items["t2"].depth, items["t2"].hop, items["t2"].via) == (2, "seed_hop", "ADA")
    assert (items["t1"].depth, items["t1"].hop, items["t1"].via) == (3, "bridge", "ADA > BOB")
    assert items["t1"].status == "included" and "Bob built engines." in ctx.text
    assert ctx.recorder.round_trips == 3
    assert ctx.recorder.to_dict()["items"][0].get("depth") is not None  # in the stored JSON too


def test_the_bridge_grows_a_new_neighbourhood_and_leaves_the_expansion_as_read(chain) -> None:
    """The stages hand typed values on: the bridge's links are new rows with their hop, weight and path; the
    expansion's own rows stay as the database returned them (nothing is written into a row a stage was given)."""
    ctx = _context(chain, max_hops=3)
    assert ctx.state is not None
    found, added = ctx.state.found, {"hop", "weight", "path"}
    assert [link["chunk"] for link in found.bridge_links] == ["t1"]
    assert all(added <= set(link) for link in found.bridge_links)
    assert not any(added & set(row) for row in (*found.expansion.seed_links, *found.expansion.entity_links))
    assert {c["id"] for c in found.expansion.chunks} == {"t2", "t3"}  # round trip 2's answer, as it came
    assert [c["id"] for c in found.more_chunks] == ["t1"]  # what the bridge added, beside it
    assert {c["id"] for c in found.chunks} == {"t1", "t2", "t3"} and ctx.state.route == ctx.recorder.route
    assert [c.id for c in ctx.state.ranked.candidates["chunk"]] == ["t3", "t2", "t1"]


def test_the_hop_limit_holds_and_costs_no_round_trip(chain) -> None:
    ctx = _context(chain, max_hops=2)
    assert "t1" not in {i.id for i in ctx.recorder.items}
    assert ctx.recorder.round_trips == 2
    # with nothing new to find the loop stops: a fourth hop is allowed but not taken
    ctx = _context(chain, max_hops=5)
    assert ctx.recorder.round_trips == 4  # hop 3 found t1, hop 4 found nothing and ended the loop


# -- reranker --------------------------------------------------------------------------------------------------
def _chunks(texts: list[str]) -> list[Candidate]:
    return [Candidate("chunk", f"c{i}", 0, 1.0 - i / 10, rank=i + 1, payload={"text": t}) for i, t in enumerate(texts)]


def _no_chat() -> Any:
    raise AssertionError("the endpoint provider must not call the chat model")


TEXTS = ["Bob built engines.", "Nothing here at all.", "Cy wrote about Ada and Bob."]


def test_endpoint_reranker_posts_the_cohere_shape_and_reorders() -> None:
    with FakeRerank() as server:
        cfg = RerankConfig(provider="endpoint", base_url=server.base_url, model="bge", api_key="k", top_n=2)
        out = rerank_chunks(_chunks(TEXTS), "who wrote about ada", cfg, lambda t, n: t, _no_chat, None)  # type: ignore[arg-type]
        req = server.requests[0]
    assert req["path"] == "/rerank" and req["auth"] == "Bearer k"
    assert {k: req[k] for k in ("model", "query", "documents", "top_n")} == {
        "model": "bge",
        "query": "who wrote about ada",
        "documents": TEXTS[:2],
        "top_n": 2,
    }
    # only the top_n were reranked; c2 keeps its place after them and has no rerank score
    assert [c.id for c in out] == ["c0", "c1", "c2"]  # no word shared with the query: ties keep their order
    assert "rerank_score" in out[0].payload and "rerank_score" not in out[-1].payload
    with FakeRerank(score=lambda q, d: float("ada" in d.lower())) as server:
        cfg = RerankConfig(provider="endpoint", base_url=server.base_url, top_n=3)
        reranked = rerank_chunks(_chunks(TEXTS), "ada", cfg, lambda t, n: t, _no_chat, None)  # type: ignore[arg-type]
        out = renumber(reranked, lambda xs: [1] * len(xs))
    assert [c.id for c in out] == ["c2", "c0", "c1"]
    assert [c.rank for c in out] == [1, 2, 3] and out[0].payload["row"].startswith("1|")
    assert out[0].payload["rerank_score"] == 1.0


def test_endpoint_reranker_failures_are_errors() -> None:
    with FakeRerank() as server:
        server.status = 503
        cfg = RerankConfig(provider="endpoint", base_url=server.base_url, backoff_base_s=0)
        with pytest.raises(RerankError, match="HTTP 503"):
            rerank_chunks(_chunks(TEXTS), "q", cfg, lambda t, n: t, _no_chat, None)  # type: ignore[arg-type]
        assert len(server.requests) == 1 + cfg.max_retries  # transient: retried first (tests/test_retry.py)
    with pytest.raises(RerankError, match="base_url"):
        rerank_chunks(_chunks(TEXTS), "q", RerankConfig(provider="endpoint"), lambda t, n: t, _no_chat, None)  # type: ignore[arg-type]
    with pytest.raises(RerankError, match="unreachable"):
        cfg = RerankConfig(provider="endpoint", base_url="http://127.0.0.1:9", timeout_s=2, backoff_base_s=0)
        rerank_chunks(_chunks(TEXTS), "q", cfg, lambda t, n: t, _no_chat, None)  # type: ignore[arg-type]


def test_llm_reranker_ranks_listwise_within_its_call_budget(fake_llm) -> None:
    fake_llm.responder = lambda req: json.dumps({"ranking": [2, 1]})
    cfg = make_config(llm={"base_url": fake_llm.base_url, "api_key": "test", "max_retries": 0})
    rt = Runtime(cfg)
    rr = RerankConfig(provider="llm", top_n=4, max_llm_calls=2)
    from driftgraph.prompts import render_prompt

    texts = ["alpha", "beta", "gamma", "delta"]
    out = rerank_chunks(
        _chunks(texts), "q", rr, lambda t, n: t, rt.chat, lambda name, **v: render_prompt(name, cfg.prompts, **v)
    )
    assert len(fake_llm.chat_requests()) == 2  # 4 passages over at most 2 calls
    assert "[1] alpha" in fake_llm.chat_requests()[0]["messages"][0]["content"]
    # each batch reversed: beta, alpha (batch 1) and delta, gamma (batch 2), ties by original order
    assert [c.payload["text"] for c in out] == ["beta", "delta", "alpha", "gamma"]
    assert rt.ledger.phases["rerank"].to_dict()["llm_calls"] == 2  # recorded in the run's cost ledger
