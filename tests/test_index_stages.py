"""Pure stages of the indexer: chunking, tolerant parsing, merging, Leiden communities, report context."""

from __future__ import annotations

import pytest

from driftgraph.config import IndexConfig
from driftgraph.errors import ReplyFormatError
from driftgraph.index.chunk import chunk_document, split_tokens
from driftgraph.index.communities import detect_communities
from driftgraph.index.extract import ChunkExtraction
from driftgraph.index.load import Document, document_id
from driftgraph.index.merge import merge, norm_title
from driftgraph.index.parse import parse_claims, parse_graph, parse_report
from driftgraph.index.reports import ContextBuilder, Report
from driftgraph.llm.tokenizer import get_tokenizer
from tests.conftest import make_config


def test_split_tokens_windows():
    assert split_tokens(0, 10, 2) == []
    assert split_tokens(5, 10, 2) == [(0, 5)]
    assert split_tokens(10, 10, 2) == [(0, 10)]
    assert split_tokens(25, 10, 2) == [(0, 10), (8, 18), (16, 25)]


def test_chunks_overlap_keep_order_and_stable_ids():
    text = " ".join(f"word{i}" for i in range(300))
    doc = Document(document_id(text), "t.txt", text, {})
    chunks = chunk_document(doc, 50, 10, "cl100k_base")
    assert [c.index for c in chunks] == list(range(len(chunks))) and len(chunks) > 3
    tok = get_tokenizer("cl100k_base")
    ids = tok.encode(text)
    assert tok.encode(chunks[0].text) == ids[:50]
    assert tok.encode(chunks[1].text)[:10] == ids[40:50], "10 tokens of overlap"
    assert all(c.n_tokens <= 50 for c in chunks)
    assert [c.id for c in chunk_document(doc, 50, 10, "cl100k_base")] == [c.id for c in chunks]
    assert len({c.id for c in chunks}) == len(chunks)


def test_overlap_must_be_below_size():
    with pytest.raises(ValueError, match="chunk_overlap"):
        IndexConfig(chunk_size=100, chunk_overlap=100)


def test_parse_graph_is_tolerant_per_record():
    text = """Here you go:
```json
{"entities": [{"title": " Ada ", "type": "person", "description": "x"}, {"title": "", "type": "x"},
              {"title": "Bletchley", "type": null}],
 "relationships": [{"source": "Ada", "target": "Bletchley", "description": "d", "strength": "7"},
                   {"source": "Ada"}]}
```"""
    ents, rels, dropped = parse_graph(text)
    assert [e.title for e in ents] == ["Ada", "Bletchley"] and ents[1].type == ""
    assert rels[0].strength == 7.0 and dropped == 2


@pytest.mark.parametrize("bad", ["no json here", "[1, 2]", '{"foo": 1}', '{"entities": [}'])
def test_parse_graph_errors_name_the_problem(bad):
    with pytest.raises(ReplyFormatError):
        parse_graph(bad)


def test_parse_claims_and_report():
    claims, dropped = parse_claims('{"claims": [{"subject": "Ada", "status": "TRUE"}, {"object": "x"}]}')
    assert claims[0].subject == "Ada" and claims[0].object == "NONE" and dropped == 1
    rep = parse_report('{"title": "T", "summary": "S", "rating": "12", "findings": ["plain", {"summary": "s"}]}')
    assert rep.rating == 10.0 and [f.summary for f in rep.findings] == ["plain", "s"]
    with pytest.raises(ReplyFormatError, match="title"):
        parse_report('{"summary": "no title"}')


def _ext(chunk_id, ents, rels, claims=()):
    from driftgraph.index.parse import ClaimRecord, EntityRecord, RelationshipRecord

    return ChunkExtraction(
        chunk_id,
        [EntityRecord(title=t, type=k, description=d) for t, k, d in ents],
        [RelationshipRecord(source=s, target=t, description=d, strength=w) for s, t, d, w in rels],
        [ClaimRecord(subject=s, object=o, description=d) for s, o, d in claims],
    )


class _C:
    def __init__(self, cid):
        self.id = cid


def test_merge_by_normalised_title_and_type():
    chunks = [_C("c1"), _C("c2")]
    exts = [
        _ext("c1", [("Ada Lovelace", "person", "wrote notes"), ("Babbage", "person", "built engines")],
             [("Ada Lovelace", "Babbage", "worked with", 5), ("Ada Lovelace", "Analytical Engine", "described", 2)],
             [("Ada Lovelace", "Babbage", "claimed")]),
        _ext("c2", [('"ada  lovelace"', "PERSON", "wrote notes"), ("Ada Lovelace", "event", "a play"),
                    ("Babbage", "person", "a mathematician")],
             [("Babbage", "ada lovelace", "mentored", 3), ("Babbage", "Babbage", "self", 1)]),
    ]  # fmt: skip
    g = merge(chunks, exts)
    by = {(e.title, e.type): e for e in g.entities}
    assert set(by) == {("ADA LOVELACE", "PERSON"), ("ADA LOVELACE", "EVENT"), ("BABBAGE", "PERSON"),
                       ("ANALYTICAL ENGINE", "")}  # fmt: skip
    ada = by[("ADA LOVELACE", "PERSON")]
    assert ada.descriptions == ["wrote notes"] and ada.text_unit_ids == ["c1", "c2"] and ada.frequency == 2
    assert by[("BABBAGE", "PERSON")].descriptions == ["built engines", "a mathematician"]
    assert len(g.relationships) == 2, "A->B and B->A merge into one pair; self-loops dropped"
    pair = next(r for r in g.relationships if "BABBAGE" in (r.source, r.target))
    assert (pair.source, pair.target) == ("ADA LOVELACE", "BABBAGE"), "direction of first mention"
    assert pair.weight == 8 and pair.descriptions == ["worked with", "mentored"] and pair.text_unit_ids == ["c1", "c2"]
    assert ada.degree == 2 and pair.combined_degree == 3
    assert g.claims[0].subject_id == ada.id and g.claims[0].object_id == by[("BABBAGE", "PERSON")].id
    assert [e.id for e in merge(chunks, list(reversed(exts))).entities] == [e.id for e in g.entities]


def test_norm_title():
    assert norm_title('  "The  Forge." ') == "THE FORGE"
    assert norm_title("ﬁne") == "FINE"


def _grouped_graph(groups: int = 3, subs: int = 2, size: int = 5):
    """Groups of dense sub-cliques: level 0 finds the groups, level 1 splits them into sub-cliques."""
    ents, rels = [], []
    for g in range(groups):
        for s in range(subs):
            names = [f"G{g}S{s}N{i}" for i in range(size)]
            ents += [(n, "person", f"member of {g}/{s}") for n in names]
            rels += [(a, b, "knows", 5) for a in names for b in names if a < b]
        for s in range(subs):
            for t in range(s + 1, subs):
                rels += [(f"G{g}S{s}N{k}", f"G{g}S{t}N{k}", "works with", 5) for k in range(size)]
        rels.append((f"G{g}S0N0", f"G{(g + 1) % groups}S0N0", "bridge", 1))
    return merge([_C("c")], [_ext("c", ents, rels)])


def test_communities_are_hierarchical_deterministic_and_bounded():
    g = _grouped_graph()
    a = detect_communities(g, max_cluster_size=6, seed=7)
    b = detect_communities(_grouped_graph(), max_cluster_size=6, seed=7)
    assert [(c.id, c.community, c.level, c.parent, c.entity_ids) for c in a] == [
        (c.id, c.community, c.level, c.parent, c.entity_ids) for c in b
    ]
    assert {c.level for c in a} == {0, 1}
    by = {c.community: c for c in a}
    for c in a:
        if c.parent >= 0:
            assert by[c.parent].level == c.level - 1 and c.community in by[c.parent].children
            assert set(c.entity_ids) <= set(by[c.parent].entity_ids)
    assert sum(c.size for c in a if c.level == 0) == 30
    assert all(c.size <= 6 for c in a if c.level == 1)
    for c in a:
        ends = {r.id: {r.source_id, r.target_id} for r in g.relationships}
        assert all(ends[r] <= set(c.entity_ids) for r in c.relationship_ids)


def test_report_context_substitutes_sub_reports_when_raw_data_does_not_fit():
    g = _grouped_graph()
    comms = detect_communities(g, max_cluster_size=6, seed=7)
    parent = next(c for c in comms if c.children)
    children = [c for c in comms if c.community in parent.children]
    reports = {c.id: Report(c.id, f"R{c.community}", "s", 5.0, "e", [], f"# Report {c.community}") for c in children}
    big = ContextBuilder(g, make_config(index={"report_max_input_tokens": 8000}))
    text, substituted = big.context(parent, children, reports)
    assert not substituted and "-----Entities-----" in text and "# Report" not in text
    small = ContextBuilder(g, make_config(index={"report_max_input_tokens": 300}))
    text, substituted = small.context(parent, children, reports)
    assert substituted and "-----Reports-----" in text and "# Report" in text
    assert small.raw(parent.entity_ids, parent.relationship_ids, 300)[1] <= 300
