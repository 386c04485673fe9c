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


def test_bootstrap_interval_is_seeded_and_holds_the_mean() -> None:
    from bench.metrics import bootstrap_ci

    vals = [0.0, 0.5, 1.0, 1.0, 0.5, 1.0, 0.0, 1.0, 1.0, 1.0]
    lo, hi = bootstrap_ci(vals, seed=3)
    assert (lo, hi) == bootstrap_ci(vals, seed=3)  # a rerun of the report prints the same interval
    assert lo < sum(vals) / len(vals) < hi
    assert lo >= 0.0 and hi <= 1.0
    assert bootstrap_ci([0.7] * 20) == pytest.approx((0.7, 0.7))  # no spread, no interval


def test_mean_ci_is_the_one_interval_cell_both_report_tables_print() -> None:
    from bench.metrics import bootstrap_ci, mean_ci

    vals = [0.0, 0.5, 1.0, 1.0, 0.25, 0.75]
    lo, hi = bootstrap_ci(vals, seed=0)
    assert mean_ci(vals) == f"0.583 [{lo:.2f}–{hi:.2f}]"
    assert mean_ci([0.7] * 20) == "0.700 [0.70–0.70]"


def test_paired_counts_wins_and_says_when_a_difference_is_noise() -> None:
    from bench.metrics import paired

    a = [1.0] * 30
    b = [0.0] * 30
    p = paired(a, b)
    assert (p["wins"], p["losses"], p["ties"]) == (30, 0, 0) and p["significant"] and p["diff"] == 1.0
    # one win, one loss, the rest tied: the interval holds 0
    p = paired([1.0, 0.0] + [0.5] * 20, [0.0, 1.0] + [0.5] * 20)
    assert (p["wins"], p["losses"], p["ties"]) == (1, 1, 20)
    assert p["lo"] <= 0.0 <= p["hi"] and not p["significant"]
    with pytest.raises(ValueError):
        paired([1.0], [1.0, 0.0])


def test_ranked_recall_counts_gold_in_the_first_k() -> None:
    from bench.metrics import ranked_recall

    assert ranked_recall(["a", "b", "c"], ["b", "c"], 2) == 0.5
    assert ranked_recall(["a", "b", "c"], ["b", "c"], 5) == 1.0
    assert ranked_recall([], ["x"], 5) == 0.0
    assert ranked_recall(["a"], [], 2) == 1.0


def test_reciprocal_rank_is_one_over_the_place_of_the_first_gold_id() -> None:
    from bench.metrics import reciprocal_rank

    assert reciprocal_rank(["a", "b", "c"], ["c", "b"]) == 0.5
    assert reciprocal_rank(["b"], ["b"]) == 1.0
    assert reciprocal_rank(["a", "b"], ["x"]) == 0.0
    assert reciprocal_rank([], []) == 1.0


def test_ratio_ci_is_the_ratio_of_means_with_a_seeded_paired_interval() -> None:
    from bench.metrics import ratio_ci

    r = ratio_ci([1.0, 0.5, 1.0, 0.0], [0.5, 0.5, 0.5, 0.5])
    assert r["ratio"] == 1.25 and r["lo"] <= 1.25 <= r["hi"]
    assert r == ratio_ci([1.0, 0.5, 1.0, 0.0], [0.5, 0.5, 0.5, 0.5])
    assert ratio_ci([1.0, 1.0], [1.0, 1.0]) == {"ratio": 1.0, "lo": 1.0, "hi": 1.0}


def test_folds_partition_the_questions() -> None:
    from bench.metrics import folds

    fs = folds(50, 5, seed=0)
    assert sorted(i for f in fs for i in f) == list(range(50))
    assert {len(f) for f in fs} == {10}
    assert fs == folds(50, 5, seed=0) and fs != folds(50, 5, seed=1)


def test_cross_validation_scores_the_choice_on_held_out_questions() -> None:
    from bench.metrics import cross_validate, folds

    n = 20
    fold_of = {i: k for k, f in enumerate(folds(n, 5, 0)) for i in f}
    # "lucky" is perfect on fold 0 only and worse than "steady" (0.6 everywhere) on average: never chosen
    scores = {"steady": [0.6] * n, "lucky": [1.0 if fold_of[i] == 0 else 0.4 for i in range(n)]}
    cv = cross_validate(scores, k=5, seed=0)
    assert [f["chosen"] for f in cv["folds"]] == ["steady"] * 5
    assert cv["held_out"] == pytest.approx(0.6) and cv["min"] == cv["max"] == pytest.approx(0.6)
    # a tie goes to the first configuration listed (the shipped defaults)
    tie = cross_validate({"first": [0.5] * n, "second": [0.5] * n})
    assert {f["chosen"] for f in tie["folds"]} == {"first"}


def test_sensitivity_scales_one_key_nested_or_not_and_its_table_marks_significance():
    from bench.run.dg.sensitivity import scaled, table

    defaults = {"chunk_top_k": 60, "ppr": {"damping": 0.5, "fetch": False}}
    assert scaled(defaults, "chunk_top_k", 0.75) == ({"chunk_top_k": 45}, 45)
    assert scaled(defaults, "chunk_top_k", 1.33) == ({"chunk_top_k": 80}, 80)  # integers stay integers
    assert scaled(defaults, "ppr.damping", 1.5) == ({"ppr": {"damping": 0.75}}, 0.75)
    sig = {"diff": 0.04, "lo": 0.01, "hi": 0.07, "significant": True, "wins": 3, "losses": 0, "ties": 47}
    flat = {"diff": 0.0, "lo": 0.0, "hi": 0.0, "significant": False, "wins": 0, "losses": 0, "ties": 50}
    run = {
        "budgets": [2000, 4000],
        "questions": 50,
        "machine": {"date": "today"},
        "defaults": {"2000": 0.88, "4000": 0.96},
        "rows": [
            {
                "key": "min_similarity",
                "factor": 1.33,
                "value": 0.56,
                "default": 0.42,
                "recall": {"2000": 0.92, "4000": 0.96},
                "paired": {"2000": sig, "4000": flat},
            },
            {"key": "ppr.damping", "factor": 2.0, "value": 1.0, "default": 0.5, "refused": "must be < 1"},
        ],
    }
    text = table(run)
    assert "| `min_similarity` | 0.56 (0.42) | 0.920 (+0.040*) | 0.960 (+0.000) |" in text
    assert "| `ppr.damping` | 1 (0.5) | refused by the config model |" in text


def test_the_cross_validation_table_shows_each_configurations_ranked_recall() -> None:
    from bench.report.stats import cross_validation

    fold = {"chosen": "defaults", "train": 0.5, "test": 0.5, "n": 2}
    config = {"overrides": {}, "recall": {"2000": [1.0, 0.0]}, "score": [1.0, 0.0]}
    cv = {
        "budgets": [2000],
        "configs": {
            "defaults": {**config, "r2": [0.5, 0.0], "r5": [1.0, 0.5]},
            "older raw file": config,  # written before R@k was recorded
        },
        "cv": {"folds": [fold], "held_out": 0.5, "min": 0.5, "max": 0.5, "mean": 0.5},
    }
    text = "\n".join(cross_validation(cv))
    assert "| configuration | 2,000 | R@2 | R@5 |" in text
    assert "| defaults `{}` | 0.500 | 0.250 | 0.750 |" in text
    assert "| older raw file `{}` | 0.500 | – | – |" in text
    assert "| configuration | 2,000 |\n" in text  # the paired table has no R@k when a configuration lacks them
    cv["configs"]["older raw file"] = {**config, "r2": [0.0, 0.0], "r5": [1.0, 0.5]}
    paired_rows = [line for line in cross_validation(cv) if line.startswith("| older raw file |")]
    assert paired_rows and paired_rows[0].count("|") == 5  # name, 2,000, R@2, R@5
