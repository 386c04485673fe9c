"""Global/basic search parts that need no database: tolerant JSON, point and rating parsing, batch packing."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from driftgraph.config import Config
from driftgraph.errors import QuestionError
from driftgraph.llm.jsonreply import extract_json_object as parse_json_object
from driftgraph.llm.structured import as_int
from driftgraph.llm.tokenizer import count_tokens
from driftgraph.query.basic.search import fulltext_query
from driftgraph.query.citations import map_citations
from driftgraph.query.global_.map import _parse_points, make_batches
from driftgraph.query.global_.select import CommunityReport, ReportState, _ratings_validator
from driftgraph.query.requests import check_question
from driftgraph.runtime import Runtime

DEPS = Runtime(Config())  # store and embedder open lazily: never here


def test_parse_json_object_reads_fenced_and_wrapped_replies():
    assert parse_json_object('{"a": 1}') == {"a": 1}
    assert parse_json_object('Sure!\n```json\n{"a": 2}\n```\nHope this helps.') == {"a": 2}
    assert parse_json_object('The answer is {"a": 3} as requested.') == {"a": 3}
    assert parse_json_object('{"a": [1, 2,], "b": "x",}') == {"a": [1, 2], "b": "x"}  # trailing commas
    with pytest.raises(ValueError, match="invalid JSON"):
        parse_json_object('{"a": 1')
    with pytest.raises(ValueError, match="empty"):
        parse_json_object("   ")


def test_parse_points_skips_bad_items_and_counts_them():
    points, skipped = _parse_points(
        {
            "points": [
                {"description": "good", "score": "87", "reports": [1, "Report 3"]},
                {"description": "", "score": 50},
                {"description": "no score"},
                "not an object",
                {"answer": "older key name", "score": 140.4},
            ]
        }
    )
    assert points == [("good", 87, [1, 3]), ("older key name", 100, [])]
    assert skipped == 3
    assert _parse_points([{"description": "bare list", "score": 0}]) == ([("bare list", 0, [])], 0)
    assert _parse_points({"points": []}) == ([], 0)
    with pytest.raises(ValueError, match="none of the 2 points"):
        _parse_points({"points": [{"score": 1}, {"description": "x", "score": "high"}]})
    with pytest.raises(ValueError, match="points"):
        _parse_points({"answer": "prose"})


def test_ratings_need_every_report():
    validate = _ratings_validator(3, 5)
    assert validate(
        {"ratings": [{"report": 1, "rating": 9}, {"report": 2, "rating": 0}, {"report": 3, "rating": "2"}]}
    ) == {
        1: 5,
        2: 0,
        3: 2,
    }
    with pytest.raises(ValueError, match=r"\[3\]"):
        validate({"ratings": [{"report": 1, "rating": 1}, {"report": 2, "rating": 1}, {"report": 7, "rating": 1}]})


def test_as_int_rejects_non_numbers():
    assert as_int(" 42 ", 0, 100) == 42 and as_int(-3, 0, 100) == 0
    for bad in (None, "high", True):
        with pytest.raises((ValueError, TypeError)):
            as_int(bad, 0, 100)


def test_question_and_citations():
    with pytest.raises(QuestionError):
        check_question("  ")
    cites = map_citations("A [Data: Reports (2, 9, +more)]. B [Data: Reports (2)]", "Reports", {2: "r2", 3: "r3"})
    assert cites == {"reports": {"2": "r2"}, "unmapped": [9]}
    assert fulltext_query('What is "Dulce" AND (base)?') == "what is dulce and base"


def _reports(sizes: list[int]) -> list[CommunityReport]:
    return [
        CommunityReport(f"r{i:03d}", i, 0, f"t{i}", 1.0, "", " ".join(["word"] * n), n) for i, n in enumerate(sizes)
    ]


def test_batches_are_seeded_and_cover_every_report_once():
    reports = _reports([50 + 13 * i for i in range(20)])

    def run(seed: int) -> list[list[str]]:
        states = {r.id: ReportState(r) for r in reports}
        return [[r.id for _, r in b.reports] for b in make_batches(reports, states, 400, random.Random(seed), DEPS)]

    first = run(7)
    assert first == run(7)
    assert first != run(8)
    assert sorted(i for b in first for i in b) == sorted(r.id for r in reports)


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.lists(st.integers(1, 700), min_size=1, max_size=25), budget=st.integers(60, 1500), seed=st.integers(0, 9)
)
def test_every_batch_is_within_budget(sizes, budget, seed):
    reports = _reports(sizes)
    states = {r.id: ReportState(r) for r in reports}
    batches = make_batches(reports, states, budget, random.Random(seed), DEPS)
    for batch in batches:
        assert batch.tokens == count_tokens(batch.text, "cl100k_base") <= budget
    assert sorted(r.id for b in batches for _, r in b.reports) == sorted(r.id for r in reports)
    short_ids = [sid for b in batches for sid, _ in b.reports]
    assert short_ids == list(range(1, len(reports) + 1))
    # a report too large for any batch is cut to fit, and the trace says so
    for r in reports:
        assert states[r.id].truncated == (
            count_tokens(f"----- Report {states[r.id].short_id} -----\n{r.text}", "cl100k_base") > budget
        )
