"""The synthetic multi-hop questions (bench/run/synth_questions.py) and their report section (bench/report/synth.py).

The generator runs on the shared MuSiQue index (no database): each question must be a chain whose every hop
has to be found through the one before, or the set would measure nothing the dev split does not.
"""

from __future__ import annotations

import json
from itertools import pairwise
from pathlib import Path

from bench.report import synth as report_synth
from bench.run import synth_questions

ROOT = Path(__file__).resolve().parents[1]


def test_each_question_is_a_chain_found_only_hop_by_hop(shared_data: Path) -> None:
    musique = shared_data / "musique"
    rows = synth_questions.build(4, seed=3, root=musique)
    assert {r["hops"] for r in rows} == {2, 3, 4} and len(rows) == 12
    names = synth_questions.entity_units(musique)  # entity title -> the text units that name it
    for r in rows:
        gold = r["gold_text_unit_ids"]
        assert len(gold) == r["hops"] == len(set(gold))  # one distinct text unit per hop
        anchor = r["question"].split(" ")[0]
        assert r["answer"].lower() not in r["question"].lower()  # the answer is never named
        # the anchor entity is named by the first unit only: no later hop is reachable from the question's name
        anchors = [t for t in names if r["question"].startswith(t + " ") and gold[0] in names[t]]
        assert anchors, anchor
        assert any(not (names[a] & set(gold[1:])) for a in anchors)
    again = synth_questions.build(4, seed=3, root=musique)
    assert again == rows  # seeded: the same questions every time
    held = synth_questions.build(4, seed=3, root=musique, exclude=frozenset({tuple(rows[0]["gold_text_unit_ids"])}))
    assert tuple(rows[0]["gold_text_unit_ids"]) not in {tuple(r["gold_text_unit_ids"]) for r in held}


def test_the_committed_sets_do_not_share_a_chain() -> None:
    def chains(name: str) -> set[tuple[str, ...]]:
        lines = (ROOT / "bench" / "questions" / name).read_text(encoding="utf-8").splitlines()
        return {tuple(json.loads(line)["gold_text_unit_ids"]) for line in lines if line.strip()}

    sets = [chains(f"musique_synth{s}.jsonl") for s in ("", "_seed1", "_seed2", "_seed3")]
    assert [len(s) for s in sets] == [180, 130, 157, 103]
    assert all(not (a & b) for i, a in enumerate(sets) for b in sets[i + 1 :])


def test_coherent_chains_bridge_through_names_only(shared_data: Path) -> None:
    def bridges(coherent: bool) -> list[str]:
        """The entity each pair of consecutive triples shares (exactly one: a chain never revisits a name)."""
        rows = synth_questions.build(
            6, seed=3, hop_counts=(3, 4), root=shared_data / "musique", coherent=coherent, with_chains=True
        )
        assert len(rows) == 12
        shared = [{a["head"], a["tail"]} & {b["head"], b["tail"]} for r in rows for a, b in pairwise(r["chain"])]
        assert all(len(s) == 1 for s in shared)
        return [s.pop() for s in shared]

    named = bridges(coherent=True)
    assert named and all(synth_questions._named(b) for b in named)
    # the filter bites: without it some bridge of the same seed is a year, an amount or a lower-case noun
    assert not all(synth_questions._named(b) for b in bridges(coherent=False))


def test_each_worded_question_keeps_its_chain_and_every_chain_is_worded_or_rejected() -> None:
    """A reader worded the seed-2, seed-3 and seed-4 chains that make sense as a question
    (``musique_synth_worded.jsonl`` for seeds 2 and 3, ``musique_synth_worded_seed4.jsonl``; ids ``seedN:<id>``)
    and gave a reason for each one that does not (``musique_synth_seedN_rejected.jsonl``); the gold units stay
    the chain's."""
    qdir = ROOT / "bench" / "questions"

    def rows(name: str) -> list[dict]:
        return [json.loads(line) for line in (qdir / name).read_text(encoding="utf-8").splitlines() if line.strip()]

    worded = rows("musique_synth_worded.jsonl") + rows("musique_synth_worded_seed4.jsonl")
    assert len(worded) == 33 and len({r["id"] for r in worded}) == 33
    for seed in ("seed2", "seed3", "seed4"):
        source = {r["id"]: r for r in rows(f"musique_synth_{seed}.jsonl")}
        mine = {r["id"].split(":", 1)[1]: r for r in worded if r["id"].startswith(seed + ":")}
        rejected = rows(f"musique_synth_{seed}_rejected.jsonl")
        assert sorted([*mine, *(r["id"] for r in rejected)]) == sorted(source)
        assert all(r["reason"].strip() for r in rejected)
        for qid, r in mine.items():
            assert (r["gold_text_unit_ids"], r["hops"]) == (source[qid]["gold_text_unit_ids"], source[qid]["hops"])
            assert r["question"] != source[qid]["question"] and r["question"].endswith("?")


def test_the_report_marks_what_is_not_significant() -> None:
    summary = {"mean": 0.5, "lo": 0.4, "hi": 0.6, "per_hop": {"2": 0.7, "3": 0.3}}
    d = {
        "questions": "q.jsonl",
        "budgets": [2000],
        "hops": [2, 3],
        "machine": {"date": "D", "cpu": "C", "driftgraph": "abc"},
        "command": "python -m bench synth-recall",
        "systems": {
            "driftgraph local (defaults)": {"summary": {"2000": summary}},
            "other": {"summary": {"2000": {**summary, "mean": 0.45}}},
        },
        "paired_defaults_vs": {
            "other": {"2000": {"diff": 0.05, "lo": -0.01, "hi": 0.11, "wins": 3, "losses": 1, "significant": False}}
        },
    }
    text = "\n".join(report_synth.section(d, "held out: other chains"))
    assert "(MuSiQue index), held out: other chains" in text and "1 2-hop, 1 3-hop" in text
    assert "| driftgraph local (defaults) | 0.500 [0.40–0.60] | 0.700 | 0.300 |" in text
    assert "| other | +0.050 [-0.01, +0.11] 3/1, n.s. |" in text
