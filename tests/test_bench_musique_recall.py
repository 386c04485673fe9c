"""The loss issue 37 item 7 reports: the triples cut's recall minus the real-model index's, paired by question id
on the questions both sides measured, per system and budget, and never a row for a system one side lacks."""

from __future__ import annotations

from bench.realmodel.musique_recall import LOCAL, loss, table


def _side(recalls: dict[str, float], system: str = LOCAL) -> dict:
    return {"systems": {system: {"2000": [{"id": i, "recall": r} for i, r in recalls.items()]}}}


def test_the_loss_is_paired_on_the_questions_both_indexes_answered() -> None:
    real = _side({"q1": 0.0, "q2": 0.5, "q3": 1.0, "only-real": 0.0})
    cut = _side({"q1": 1.0, "q2": 1.0, "q3": 1.0, "only-cut": 1.0})
    row = loss(real, cut, (2000,))[LOCAL]["2000"]
    assert row["n"] == 3  # only-real and only-cut are not compared with anything
    assert abs(row["real"] - 0.5) < 1e-9 and abs(row["cut"] - 1.0) < 1e-9
    p = row["loss"]
    assert abs(p["diff"] - 0.5) < 1e-9  # cut minus real: positive is recall the real-model index lost
    assert (p["wins"], p["losses"], p["ties"]) == (2, 0, 1)
    assert "| driftgraph local | 2,000 | 1.000 | 0.500 | +0.500" in table({"loss": loss(real, cut, (2000,))})


def test_a_system_or_budget_one_side_lacks_gets_no_row() -> None:
    real = _side({"q1": 0.5})
    cut = _side({"q1": 0.5}, system="driftgraph basic")
    assert loss(real, cut, (2000,)) == {}
    both = _side({"q1": 0.5})
    assert loss(both, both, (2000, 4000))[LOCAL].keys() == {"2000"}
