"""The bench's metric functions (no database, no data): evidence recall and order statistics."""

from __future__ import annotations

import pytest

from bench.metrics import evidence_recall, percentile, spread


def test_evidence_recall_counts_gold_texts_found_verbatim() -> None:
    context = "-----Sources-----\nid|text\n1|Alpha passage.\n2|Gamma passage."
    assert evidence_recall(context, ["Alpha passage.", "Beta passage."]) == 0.5
    assert evidence_recall(context, ["Alpha passage.", "Gamma passage."]) == 1.0
    assert evidence_recall(context, ["Beta passage."]) == 0.0


def test_evidence_recall_needs_the_whole_text_and_ignores_empty_gold() -> None:
    assert evidence_recall("Alpha pass", ["Alpha passage."]) == 0.0  # a truncated unit does not count
    assert evidence_recall("anything", ["", "anything"]) == 0.5  # an unknown (empty) gold text is never found
    assert evidence_recall("anything", []) == 1.0


def test_percentile_interpolates_like_numpy() -> None:
    xs = [10.0, 20.0, 30.0, 40.0]
    assert percentile(xs, 50) == 25.0
    assert percentile(xs, 0) == 10.0 and percentile(xs, 100) == 40.0
    assert percentile(xs, 95) == pytest.approx(38.5)
    assert percentile([3.0, 1.0, 2.0], 50) == 2.0  # unsorted input


def test_spread_reports_median_min_max() -> None:
    assert spread([5.0, 1.0, 3.0]) == {"median": 3.0, "min": 1.0, "max": 5.0, "n": 3}
