"""Local search parts without a database: entry selection, chunk ranking with the second hop, rendering
(token additivity), citations, routing, rewrite rule, history validation."""

import pytest

from driftgraph.config import LocalConfig
from driftgraph.llm.tokenizer import count_tokens
from driftgraph.query import tables as render
from driftgraph.query.budget import Candidate
from driftgraph.query.citations import check_local
from driftgraph.query.history import HistoryError, validate_history
from driftgraph.query.local.assemble import account
from driftgraph.query.local.entry import fulltext_query, resolve_thresholds, select_entry
from driftgraph.query.local.neighbourhood import Neighbourhood
from driftgraph.query.local.rank import rank_all
from driftgraph.query.rewrite import needs_rewrite
from driftgraph.query.route import classify, route
from driftgraph.query.trace import EntryCandidate, Trace

PRESENT = {"chunk": True, "entity": True, "relationship": True, "report": True, "claim": False}


def _row(vector, fulltext=(), chunks=()):
    return {
        "entity_vector": [{"id": i, "title": t, "similarity": s} for i, t, s in vector],
        "entity_fulltext": [{"id": i, "title": t, "similarity": s, "fulltext_score": f} for i, t, s, f in fulltext],
        "chunk_vector": [{"id": i, "similarity": s} for i, s in chunks],
        "chunk_count": 100,
        "present": PRESENT,
    }


def test_entry_thresholds_fusion_exclusion_and_tie_break():
    s = LocalConfig(entity_top_k=3, min_similarity=0.4, relative_similarity=0.8)
    row = _row(
        vector=[("a", "Alpha", 0.8), ("b", "Beta", 0.7), ("c", "Gamma", 0.7), ("d", "Delta", 0.5), ("e", "Eps", 0.3)],
        fulltext=[("c", "Gamma", 0.7, 9.0), ("f", "Phi", 0.66, 5.0)],
    )
    out = select_entry(row, s, exclude=["ALPHA"])
    verdict = {c.id: (c.status, c.reason) for c in out.candidates}
    assert verdict["a"] == ("dropped", "excluded") and out.excluded_ids == ["a"]
    assert verdict["d"] == ("dropped", "below_relative_threshold")  # best eligible is 0.7: 0.5 < 0.56
    assert verdict["e"] == ("dropped", "below_threshold")
    # fused: c is in both lists, so it leads; b before f (vector rank 2 vs fulltext rank 2, same rrf -> sim)
    assert [c.id for c in out.entities] == ["c", "b", "f"]
    assert not out.off_topic


def test_entry_is_deterministic_on_ties_and_cut_by_top_k():
    s = LocalConfig(entity_top_k=2, min_similarity=0.0, relative_similarity=0.0, hybrid=False)
    row = _row(vector=[("z", "Z", 0.5), ("y", "Y", 0.5), ("x", "X", 0.5)])
    a = select_entry(row, s, exclude=())
    b = select_entry({**row, "entity_vector": list(reversed(row["entity_vector"]))}, s, exclude=())
    assert [c.id for c in a.entities] == ["z", "y"]  # vector rank first
    assert [c.reason for c in a.candidates if c.status == "dropped"] == ["over_top_k"]
    assert len(b.entities) == 2


def test_off_topic_when_nothing_passes():
    s = LocalConfig(min_similarity=0.42)
    out = select_entry(_row(vector=[("a", "A", 0.39), ("b", "B", 0.2)], chunks=[("c1", 0.38)]), s, exclude=())
    assert out.entities == [] and out.off_topic
    assert {c.reason for c in out.candidates} == {"below_threshold"}


def test_fulltext_query_escapes_lucene_and_drops_stopwords():
    assert fulltext_query("What is the (NOT) C++ thing: O'Reilly~2?") == "not thing reilly"
    assert fulltext_query("who is it?") == ""


def _entry(**kw):
    s = LocalConfig(**kw)
    row = _row(vector=[("e1", "Rare", 0.6)], chunks=[("s1", 0.7), ("v2", 0.5), ("v3", 0.3)])
    return s, select_entry(row, s, exclude=())


def test_second_hop_brings_in_a_chunk_similarity_missed():
    s, entry = _entry(seed_hop_weight=0.5, entity_hop_weight=0.0, chunk_min_similarity=0.15)
    expansion = {
        "chunks": [
            {"id": "s1", "text": "seed", "similarity": 0.7},
            {"id": "v2", "text": "vector two", "similarity": 0.5},
            {"id": "v3", "text": "vector three", "similarity": 0.3},
            {"id": "h1", "text": "hop", "similarity": 0.1},
        ],
        "seed_links": [{"chunk": "h1", "entity": "x", "title": "X", "df": 2, "via": "s1"}],
        "entity_links": [],
    }
    ranked = rank_all(Neighbourhood.of(expansion), entry, s, lambda texts: [len(t.split()) for t in texts])
    chunks = ranked.candidates["chunk"]
    order = [c.id for c in chunks]
    # 0.1 + 0.5 * idf(2)/idf_max * 0.7 ~= 0.1 + 0.5 * 0.78 * 0.7 = 0.37: above v3 (0.3), below v2
    assert order == ["s1", "v2", "h1", "v3"]
    hop = {c.id: c.hop for c in chunks}
    assert hop == {"s1": "vector", "v2": "vector", "h1": "seed_hop", "v3": "vector"}
    assert [c.rank for c in chunks] == [1, 2, 3, 4]
    assert all(c.tokens == len(c.payload["row"].split()) for c in chunks)


def test_unsupported_low_similarity_chunks_are_dropped():
    s, entry = _entry(chunk_min_similarity=0.35)
    expansion = {"chunks": [{"id": "v3", "text": "low", "similarity": 0.3}], "seed_links": [], "entity_links": []}
    ranked = rank_all(Neighbourhood.of(expansion), entry, s, lambda texts: [1] * len(texts))
    assert ranked.candidates["chunk"] == [] and ranked.dropped[0][1] == "below_threshold"


def test_rendered_parts_add_up_to_the_whole():
    """The fill budgets item by item; the tables must cost exactly the sum of their rows and headers."""
    enc = "cl100k_base"
    payloads = [
        ("chunk", {"text": '"Quoted" start, ending with punctuation.'}),
        ("chunk", {"text": "  leading spaces and\nnew lines\n\n"}),
        ("chunk", {"text": "Ünïcödé — dashes… 1234567 numbers!!!"}),
        ("entity", {"title": "A|B", "description": "pipes | inside", "degree": 3}),
        ("relationship", {"source": "A", "target": "B", "description": "x", "weight": 2.5}),
        ("report", {"title": "R", "full_content": "# Title\n\n## Finding\ntext"}),
        ("claim", {"subject": "A", "object": None, "type": "t", "status": "TRUE", "description": "d"}),
    ]
    cands = []
    for i, (src, p) in enumerate(payloads, start=1):
        text = render.row(src, i, p)
        cands.append(Candidate(src, f"id{i}", count_tokens(text, enc), 1.0, rank=i, payload={**p, "row": text}))
    order = ["chunk", "entity", "relationship", "report", "claim"]
    whole = render.render(cands, order)
    parts = sum(c.tokens for c in cands) + sum(count_tokens(render.header(s), enc) for s in order)
    assert count_tokens(whole, enc) == parts
    assert '"Quoted" start, ending with punctuation.' in whole  # chunk text verbatim


def test_citations_map_to_real_ids_and_report_unmapped():
    ids = {"Sources": {1: "c-1", 3: "c-3"}, "Reports": {2: "r-2"}}
    out = check_local(
        "A [Data: Sources (1, 3, +more); Reports (2)]. B [Data: Sources (9); Entities (1)]. No refs here.", ids
    )
    assert out["cited"] == {"Sources": ["c-1", "c-3"], "Reports": ["r-2"]}
    assert out["unmapped"] == ["Entities 1", "Sources 9"] and out["references"] == 5


def _ents(n):
    return [EntryCandidate(f"e{i}", f"E{i}", 0.7, "kept", similarity=0.7) for i in range(n)]


def test_route_rule():
    assert classify("What are the main themes of the story?", _ents(3))[0] == "thematic"
    assert classify("How is Alex related to Taylor?", _ents(2))[0] == "relational"
    assert classify("How is Alex related to Taylor?", _ents(1))[0] == "fact"
    assert classify("When was Alex born?", _ents(2)) == ("fact", "a specific question about 2 matched entities", True)
    assert classify("Tell me something", [])[0] == "thematic"


def test_route_override_floors_and_orders():
    s = LocalConfig(chunk_floor=2, report_floor=4, entity_floor=0)
    r = route("q", _ents(2), s, "thematic", None)
    assert r.shape == "thematic" and r.order[0] == "report" and r.floors == {"chunk": 2, "report": 4}
    assert route("When?", _ents(2), s, None, None).floors == {"chunk": 2}  # fact, entity floor 0 left out


def test_route_caps_per_shape():
    s = LocalConfig(relational_caps={"relationship": 0.4, "chunk": 0.6}, thematic_caps={"report": 0.3})
    assert route("q", _ents(2), s, "relational", None).caps == {"relationship": 0.4, "chunk": 0.6}
    assert route("q", _ents(2), s, "thematic", None).to_dict()["caps"] == {"report": 0.3}
    assert route("q", _ents(2), s, "fact", None).caps == {}  # the evidence route is never capped
    with pytest.raises(ValueError, match="report"):
        LocalConfig(thematic_caps={"report": 0.0})


def test_rewrite_rule():
    assert needs_rewrite("What did he do after that?") is not None
    assert needs_rewrite("And in 1990?") is not None
    assert needs_rewrite("Who founded the American Psychological Association?") is None


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"role": "user"}, "JSON list"),
        (["hi"], "turn 0 is not an object"),
        ([{"role": "bot", "content": "x"}], "role 'bot'"),
        ([{"role": "user", "content": 3}], "string 'content'"),
        ([{"role": "user", "content": "x", "name": "n"}], "unknown keys"),
    ],
)
def test_history_validation(data, message):
    with pytest.raises(HistoryError, match=message):
        validate_history(data)


def test_entry_holds_entities_to_the_index_threshold_unless_the_config_sets_one():
    row = {**_row([("a", "A", 0.40), ("b", "B", 0.33)]), "calibrated": {"min_similarity": 0.3}}
    s = LocalConfig(relative_similarity=0.0)
    calibrated = select_entry(row, s, (), "", resolve_thresholds(s, row["calibrated"]))
    assert [e.id for e in calibrated.entities] == ["a", "b"] and not calibrated.off_topic
    explicit = LocalConfig(relative_similarity=0.0, min_similarity=0.42)
    fixed = select_entry(row, explicit, (), "", resolve_thresholds(explicit, row["calibrated"]))
    assert fixed.entities == [] and fixed.off_topic
    assert {c.reason for c in fixed.candidates} == {"below_threshold"}
    assert select_entry(row, s, ()).off_topic  # no stored value: min_similarity_fallback 0.42


def test_a_mostly_empty_context_names_every_dropped_candidate_in_the_trace():
    rec = Trace(mode="local", question="q")
    rec.add_entry(EntryCandidate("e1", "E", 0.3, "dropped", "below_threshold"))
    rec.add_entry(EntryCandidate("c9", "", 0.1, "dropped", "off_topic", kind="chunk"))
    included = [Candidate("chunk", "c1", 100, 0.5, rank=1)]
    dropped = [
        (Candidate("chunk", "c2", 50, 0.1), "off_topic"),
        (Candidate("report", "r1", 80, 0.2), "below_threshold"),
    ]
    out = account(rec, included, dropped, 120, 8000)
    assert out["candidates"] == 3 and out["mostly_empty"] is True
    assert out["sources"] == {
        "report": {"included": 0, "dropped": {"below_threshold": 1}},
        "chunk": {"included": 1, "dropped": {"off_topic": 1}},
    }
    assert out["entry_entities_dropped"] == {"below_threshold": 1}
    assert rec.notes == [
        "context uses 120 of 8000 tokens: 1 report(s) below_threshold; 1 chunk(s) off_topic; "
        "1 entry entity below_threshold (every one is a trace item)"
    ]
    full = Trace(mode="local", question="q")
    assert "mostly_empty" not in account(full, included, [], 5000, 8000) and full.notes == []
