"""Personalized PageRank ranking (``local.ranking: ppr``) and the reranker in basic search and DRIFT's steps.

The walk is checked on hand-built graphs (pure), then against a real Neo4j on the fixture's three-chunk chain
(t3 -ADA- t2 -BOB- t1); basic search and DRIFT rerank through the fake ``/rerank`` server on operation-dulce.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from driftgraph.api import open_engine
from driftgraph.config import LocalConfig, PprConfig, parse_config
from driftgraph.errors import ConfigError
from driftgraph.query.local.entry import select_entry
from driftgraph.query.local.neighbourhood import Neighbourhood
from driftgraph.query.local.ppr import _passage_weights, walk
from driftgraph.query.local.rank import score_chunks
from driftgraph.query.local.search import LocalAsk, build_local_context
from tests.conftest import make_config
from tests.support import graphrag_fixture
from tests.support.fake_rerank import FakeRerank

PRESENT = {"chunk": True, "entity": True, "relationship": True, "report": False, "claim": False}


def _entry(hits: list[tuple[str, float]], entities: list[tuple[str, str, float]] = ()) -> Any:  # type: ignore[assignment]
    row = {
        "entity_vector": [{"id": i, "title": t, "similarity": s, "df": 2} for i, t, s in entities],
        "entity_fulltext": [],
        "chunk_vector": [{"id": c, "similarity": s} for c, s in hits],
        "chunk_count": 100,
        "present": PRESENT,
    }
    return select_entry(row, LocalConfig(min_similarity=0.1, relative_similarity=0.1), ())


def _mention(chunk: str, entity: str, title: str, df: int = 2) -> dict[str, Any]:
    return {"chunk": chunk, "entity": entity, "title": title, "df": df}


# -- the walk (pure) -------------------------------------------------------------------------------------------
def test_a_chunk_two_seeds_reach_outranks_one_that_one_seed_reaches() -> None:
    # seeds s1, s2 (chunk hits); m shares an entity with each; x and y each share one with only one seed
    entry = _entry([("s1", 0.6), ("s2", 0.6)])
    x = {"chunks": [{"id": c, "similarity": 0.1} for c in ("s1", "s2", "m", "x", "y")]}
    mentions = [
        _mention("s1", "a", "A"),
        _mention("m", "a", "A"),
        _mention("s2", "b", "B"),
        _mention("m", "b", "B"),
        _mention("s1", "c", "C"),
        _mention("x", "c", "C"),
        _mention("s2", "d", "D"),
        _mention("y", "d", "D"),
    ]
    w = walk(Neighbourhood.of(x), entry, PprConfig(passage_weight=1.0), mentions, [])
    assert w.mass["m"] > w.mass["x"] > 0 and w.mass["x"] == pytest.approx(w.mass["y"])
    assert max(w.mass.values()) == pytest.approx(1.0)  # normalised to the best chunk
    assert (w.depth["s1"], w.depth["m"], w.depth["x"]) == (1, 2, 2)
    assert w.via["m"] == "A" and w.via["x"] == "C" and w.via["s1"] == ""
    assert 1 <= w.iterations <= PprConfig().iterations


def test_a_clear_best_hit_leads_the_walk_and_the_chunks_share_of_the_restart_is_kept() -> None:
    # hits s1 (0.70) and s2 (0.55); x1 is one hop from s1 (entity A), x2 one hop from s2 (entity B)
    entry = _entry([("s1", 0.70), ("s2", 0.55)])
    x = {"chunks": [{"id": c, "similarity": 0.1} for c in ("s1", "s2", "x1", "x2")]}
    mentions = [_mention("s1", "a", "A"), _mention("x1", "a", "A"), _mention("s2", "b", "B"), _mention("x2", "b", "B")]
    flat = PprConfig(passage_weight=1.0, passage_relative_temperature=0, mass_exponent=1.0)
    linear = walk(Neighbourhood.of(x), entry, flat, mentions, [])
    sharp = walk(
        Neighbourhood.of(x),
        entry,
        PprConfig(passage_weight=1.0, passage_relative_temperature=0.8, mass_exponent=1.0),
        mentions,
        [],
    )
    linear_ratio = linear.mass["x1"] / linear.mass["x2"]
    assert linear_ratio == pytest.approx(0.70 / 0.55, rel=1e-3)  # in proportion to similarity
    assert sharp.mass["x1"] / sharp.mass["x2"] > 5 * linear_ratio  # spread 0.075: exp(0.15 / 0.06) ~ 12x
    # the chunk hits restart with the same total as before: the entities' share does not shrink
    cfg = PprConfig(passage_weight=0.05)
    shared = dict(_passage_weights(entry, cfg))
    assert sum(shared.values()) == pytest.approx(0.05 * (0.70 + 0.55))
    assert shared["s1"] > 0.9 * sum(shared.values())


def test_the_split_of_the_restart_does_not_depend_on_the_embedders_cosine_scale() -> None:
    # the same ranking of hits from an embedder whose cosines crowd into a third of the range, shifted up
    sims = [0.62, 0.55, 0.51, 0.47, 0.40, 0.33]
    wide = dict(_passage_weights(_entry([(f"h{i}", s) for i, s in enumerate(sims)]), PprConfig()))
    crowded = _entry([(f"h{i}", 0.7 + (s - 0.5) / 3) for i, s in enumerate(sims)])
    narrow = dict(_passage_weights(crowded, PprConfig()))
    for share in (wide, narrow):
        total = sum(share.values())
        assert share["h0"] / total > 0.4  # the best hit leads in both
    wide_total, narrow_total = sum(wide.values()), sum(narrow.values())
    for key in wide:
        assert wide[key] / wide_total == pytest.approx(narrow[key] / narrow_total, rel=1e-9)
    # hits that all score the same share the restart evenly (no spread, no division by zero)
    even = dict(_passage_weights(_entry([("a", 0.5), ("b", 0.5)]), PprConfig()))
    assert even["a"] == pytest.approx(even["b"]) == pytest.approx(0.05 * 0.5)


def test_the_walk_reaches_past_the_second_hop_and_records_the_path() -> None:
    entry = _entry([("t3", 0.7)])
    x = {"chunks": [{"id": "t3", "similarity": 0.7}, {"id": "t2", "similarity": 0.0}, {"id": "t1", "similarity": 0.0}]}
    mentions = [
        _mention("t3", "ada", "ADA"),
        _mention("t2", "ada", "ADA"),
        _mention("t2", "bob", "BOB"),
        _mention("t1", "bob", "BOB"),
    ]
    w = walk(Neighbourhood.of(x), entry, PprConfig(), mentions, [])
    assert (w.depth["t2"], w.depth["t1"]) == (2, 3) and w.via["t1"] == "ADA > BOB"
    assert w.mass["t3"] > w.mass["t2"] > w.mass["t1"] > 0  # mass decays along the chain
    # a RELATED edge between the seed's entity and BOB carries mass to t1 without passing through t2
    with_rel = walk(
        Neighbourhood.of(x), entry, PprConfig(), mentions, [{"source": "ada", "target": "bob", "weight": 1.0}]
    )
    assert with_rel.mass["t1"] > w.mass["t1"]
    # the walk's mass joins the score: t1 (similarity 0, no link support) now ranks with support
    s = LocalConfig(ranking="ppr", ppr=PprConfig(weight=1.0))
    scored = {c.id: c for c in score_chunks(Neighbourhood.of({**x, "ppr": w}), entry, s)}
    assert scored["t1"].hop == "ppr" and scored["t1"].support == pytest.approx(w.mass["t1"])
    assert (scored["t1"].depth, scored["t1"].via) == (3, "ADA > BOB")


def test_a_long_walk_and_the_root_of_its_mass_let_a_chain_link_two_steps_out_count() -> None:
    # t3 is the hit; t2 one chunk-entity-chunk step out, t1 two; each chunk also names an entity of its own
    # that leads to a dead-end chunk (d3, d2, d1), so the walk divides its mass at every chunk it passes
    entry = _entry([("t3", 0.7)])
    chunks = ("t3", "t2", "t1", "d3", "d2", "d1")
    x = {"chunks": [{"id": c, "similarity": 0.7 if c == "t3" else 0.0} for c in chunks]}
    mentions = [_mention("t3", "ada", "ADA"), _mention("t2", "ada", "ADA")]
    mentions += [_mention("t2", "bob", "BOB"), _mention("t1", "bob", "BOB")]
    for c in ("3", "2", "1"):
        mentions += [_mention(f"t{c}", f"x{c}", f"X{c}"), _mention(f"d{c}", f"x{c}", f"X{c}")]
    short_linear = walk(Neighbourhood.of(x), entry, PprConfig(damping=0.5, mass_exponent=1.0), mentions, [])
    long_linear = walk(Neighbourhood.of(x), entry, PprConfig(damping=0.85, mass_exponent=1.0), mentions, [])
    default = walk(Neighbourhood.of(x), entry, PprConfig(), mentions, [])
    assert short_linear.mass["t1"] < 0.05  # linear mass two steps out of a short walk: a few hundredths
    assert long_linear.mass["t1"] > 2 * short_linear.mass["t1"]  # a longer walk gets further
    assert default.mass["t1"] == pytest.approx(long_linear.mass["t1"] ** 0.5)  # the defaults: 0.85 and the root
    assert default.iterations < PprConfig().iterations  # the longer walk converges before the cap
    # the order the walk gives is kept: the root is monotone
    order = sorted(chunks, key=lambda c: -long_linear.mass[c])
    assert sorted(chunks, key=lambda c: -default.mass[c]) == order and order[0] == "t3"
    assert PprConfig().damping == 0.85 and PprConfig().mass_exponent == 0.5
    with pytest.raises(ConfigError):
        parse_config({"local": {"ppr": {"mass_exponent": 0}}}, "test")


def test_the_walk_gives_the_same_mass_and_routes_whatever_order_neo4j_returns_the_links_in() -> None:
    # Neo4j's collect() is unordered; the graph used to be numbered in link order, so the power iteration's sums
    # and the routes' tie-breaks (which of two equally short paths is the chunk's via) moved from run to run
    rng = random.Random(0)
    chunks = [f"c{i:03d}" for i in range(200)]
    mentions = [_mention(c, f"e{e}", f"E{e}") for e in range(300) for c in rng.sample(chunks, rng.randint(2, 5))]
    relations = [{"source": f"e{a}", "target": f"e{a + 1}", "weight": 1.0} for a in range(0, 300, 3)]
    entry = _entry([(c, 0.3 + 0.01 * (i % 7)) for i, c in enumerate(chunks[:10])])
    base = walk(
        Neighbourhood.of({"chunks": [{"id": c, "similarity": 0.1} for c in chunks]}),
        entry,
        PprConfig(),
        mentions,
        relations,
    )
    assert base.relations == len(relations) and len({v for v in base.via.values() if v}) > 20
    for seed in range(10):
        order = random.Random(seed)
        x = {"chunks": [{"id": c, "similarity": 0.1} for c in order.sample(chunks, len(chunks))]}
        w = walk(
            Neighbourhood.of(x),
            entry,
            PprConfig(),
            order.sample(mentions, len(mentions)),
            order.sample(relations, len(relations)),
        )
        assert (w.mass, w.depth, w.via) == (base.mass, base.depth, base.via)


def test_entry_entities_seed_the_walk_weighted_by_similarity() -> None:
    entry = _entry([], [("e1", "ALPHA", 0.9), ("e2", "BETA", 0.3)])
    x = {"chunks": [{"id": "c1", "similarity": 0.0}, {"id": "c2", "similarity": 0.0}]}
    w = walk(Neighbourhood.of(x), entry, PprConfig(), [_mention("c1", "e1", "ALPHA"), _mention("c2", "e2", "BETA")], [])
    # two separate components: the mass splits as the restart does (0.9 : 0.3), then the root of its share
    assert w.mass["c1"] == pytest.approx(1.0) and w.mass["c2"] == pytest.approx((0.3 / 0.9) ** 0.5)
    assert (w.depth["c1"], w.via["c1"]) == (1, "ALPHA")
    assert walk(Neighbourhood(), _entry([]), PprConfig(), [], []).mass == {}  # no seed, no mass


def test_ppr_keys_are_validated_and_drift_refuses_an_llm_reranker() -> None:
    with pytest.raises(ConfigError):
        parse_config({"local": {"ranking": "pagerank"}}, "test")
    with pytest.raises(ConfigError):
        parse_config({"local": {"ppr": {"damping": 1.5}}}, "test")
    with pytest.raises(ConfigError):
        parse_config({"local": {"ppr": {"unknown": 1}}}, "test")
    with pytest.raises(ConfigError, match="rerank"):
        parse_config({"drift": {"local": {"rerank": {"provider": "llm"}}}}, "test")
    assert parse_config({"basic": {"rerank": {"provider": "endpoint", "base_url": "http://x"}}}, "t").basic.rerank.top_n


# -- against Neo4j: the chain ----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def chain(neo4j_config: dict, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The fixture's tiny index (its chunks chain t3 -ADA- t2 -BOB- t1), imported once for this module."""
    return graphrag_fixture.import_chain(make_config(neo4j_config), tmp_path_factory.mktemp("chain"))


def _context(cfg: Any, max_hops: int = 3, **ppr: Any) -> Any:
    settings = LocalConfig(
        chunk_top_k=1, seed_chunks=1, entity_chunks=0, ranking="ppr", max_hops=max_hops, ppr=PprConfig(**ppr)
    )
    with open_engine(cfg) as eng:
        return build_local_context(
            eng.runtime.for_run(), LocalAsk("What did Cy write about Ada?", budget=2000), settings
        )


def test_ppr_fetches_the_third_hop_in_one_round_trip_and_traces_its_path(chain) -> None:
    ctx = _context(chain, max_hops=2, fetch=True)  # no bridge: the fetch alone reaches t1
    items = {i.id: i for i in ctx.recorder.items if i.source == "chunk"}
    assert ctx.recorder.round_trips == 3  # entry, expansion, the neighbourhood
    assert items["t1"].status == "included" and "Bob built engines." in ctx.text
    assert items["t1"].hop == "ppr" and items["t1"].via is not None and items["t1"].via.endswith("BOB")
    assert items["t1"].depth is not None and items["t1"].depth > items["t3"].depth
    assert ctx.recorder.extra["ppr"]["nodes"] >= 3 and ctx.recorder.extra["ppr"]["edges"] >= 2
    # without the fetch and the bridge the walk runs on what the expansion found: two round trips, no third hop
    bare = _context(chain, max_hops=2)  # ppr.fetch is off by default
    assert bare.recorder.round_trips == 2 and "t1" not in {i.id for i in bare.recorder.items}


def test_by_default_the_bridge_brings_the_third_hop_and_the_walk_ranks_it(chain) -> None:
    """The defaults (max_hops 3, no fetch): the bridge hops from t2, the chunk the second hop found, through BOB
    to t1, and the walk runs over that link too: t1's route and depth are the walk's (from the entry entity ADA)."""
    ctx = _context(chain)
    items = {i.id: i for i in ctx.recorder.items if i.source == "chunk"}
    bare = _context(chain, max_hops=2)
    assert ctx.recorder.round_trips == 3  # entry, expansion, the bridge's hop 3
    assert items["t1"].status == "included" and "Bob built engines." in ctx.text
    assert items["t1"].hop == "bridge" and items["t1"].via is not None and items["t1"].via.endswith("BOB")
    assert items["t1"].depth is not None and items["t1"].depth > items["t2"].depth >= items["t3"].depth
    assert ctx.recorder.extra["ppr"]["nodes"] > bare.recorder.extra["ppr"]["nodes"]


def test_the_bridges_round_trip_brings_the_related_edges_among_the_entities_already_found(chain) -> None:
    """ppr.known_relations (default): the bridge's query also returns the RELATED edges among the entry
    entities and the links' entities (ADA, BOB, CY here: r1 ADA-BOB and r3 CY-ADA), not r2 BOB-ENGINES, whose
    ENGINES only t1 names, a chunk the bridge newly found; the round trips stay three."""
    ctx = _context(chain)
    off = _context(chain, known_relations=False)
    assert ctx.recorder.round_trips == off.recorder.round_trips == 3
    assert ctx.recorder.extra["ppr"]["relations"] == 2 and off.recorder.extra["ppr"]["relations"] == 0
    assert ctx.recorder.extra["ppr"]["edges"] == off.recorder.extra["ppr"]["edges"] + 2
    # no hop past the second, no bridge query: the walk has no RELATED edge (config says so)
    assert _context(chain, max_hops=2).recorder.extra["ppr"]["relations"] == 0


def test_an_entry_entitys_best_chunk_seeds_the_second_hop(chain) -> None:
    from driftgraph.query.local.expand import ExpandFrom, expansion_params, run_expansion
    from driftgraph.query.local.run import Exclusions
    from driftgraph.store.db import Store

    def links(entity_seeds: int) -> list[tuple[str, str, str]]:
        settings = LocalConfig(entity_chunks=1, entity_seed_chunks=entity_seeds)
        params = expansion_params(settings, [0.1] * 384, ExpandFrom(["e3"]), Exclusions())  # CY: only in t3
        with Store(chain.neo4j) as store:
            x, trips = run_expansion(store, params)
        assert trips == 1 and [(k["chunk"], k["pos"]) for k in x.entity_links] == [("t3", 0)]
        return sorted((k["chunk"], k["title"], k["via"]) for k in x.seed_links)

    # no chunk hit seeds the hop here: CY's one chunk (t3) does, through ADA (in t2 and t3) to t2
    assert links(1) == [("t2", "ADA", "t3")]
    assert links(0) == []  # entity_seed_chunks 0: only chunk hits seed it, as before


# -- the reranker in basic search and DRIFT's steps (operation-dulce, fake /rerank) ------------------------------
BASIC_Q = "What is the role of the Paranormal Military Squad at Dulce base?"


def test_basic_search_reranks_its_best_chunks_and_traces_the_scores(dulce, fake_llm) -> None:
    from tests.support.cypher import q

    llm = {"base_url": fake_llm.base_url, "api_key": "test", "max_retries": 0}
    with open_engine(make_config(dulce, llm=llm)) as eng:
        plain = eng.query_basic(BASIC_Q, budget=3000, context_only=True)
        order = [i.id for i in sorted(plain.trace.items, key=lambda i: i.rank or 0)]
        third = q(eng.store, "MATCH (c:Chunk {id: $id}) RETURN c.text AS text", id=order[2])[0]["text"].strip()
    assert len(order) >= 4
    # the reranker prefers the vector order's third chunk: it must come first after reranking
    with FakeRerank(score=lambda query, doc: 1.0 if doc.strip()[:200] == third[:200] else 0.5) as server:
        rr = {"provider": "endpoint", "base_url": server.base_url, "top_n": 3}
        with open_engine(make_config(dulce, llm=llm, basic={"rerank": rr})) as eng:
            res = eng.query_basic(BASIC_Q, budget=3000, context_only=True)
        requests = list(server.requests)
    items = sorted(res.trace.items, key=lambda i: i.rank or 0)
    assert len(requests) == 1 and len(requests[0]["documents"]) == 3 == requests[0]["top_n"]  # asked once
    assert requests[0]["query"] == BASIC_Q
    assert items[0].id == order[2] and items[0].rerank_score == 1.0 and items[0].rank == 1
    assert [i.id for i in items[1:3]] == order[:2] and all(i.rerank_score == 0.5 for i in items[1:3])
    assert all(i.rerank_score is None for i in items[3:])  # past top_n: the vector order, no score
    assert res.context.text.startswith("----- Source 1 -----\n" + third[:50])
    assert res.context.tokens <= 3000
    assert any("reranked by endpoint" in n for n in res.trace.notes)


def test_drift_steps_rerank_through_drift_local_rerank(dulce, fake_llm) -> None:
    from tests.support.drift_fakes import DULCE_LAYERS, tree_responder

    fake_llm.responder = tree_responder(layers=DULCE_LAYERS)
    llm = {"base_url": fake_llm.base_url, "api_key": "test", "max_retries": 0}
    with FakeRerank() as server:
        rr = {"provider": "endpoint", "base_url": server.base_url, "top_n": 5}
        cfg = make_config(dulce, llm=llm, drift={"max_depth": 1, "local": {"rerank": rr}})
        with open_engine(cfg) as eng:
            out = eng.query_drift("What is Operation: Dulce and who leads the team at Dulce base?", seed=5)
        requests = list(server.requests)
    local_steps = [s for s in out.steps if s.kind == "local" and s.context is not None and s.context.items]
    assert local_steps and len(requests) >= len(local_steps)  # one rerank call per step with chunks
    assert all(r["path"] == "/rerank" and len(r["documents"]) <= 5 for r in requests)
    scored = [i for i in out.trace.items if i.source == "chunk" and i.rerank_score is not None]
    assert scored, "the reranker's scores reach DRIFT's trace items"
    assert out.cost.llm_calls <= cfg.drift.max_llm_calls  # the endpoint makes no chat call
