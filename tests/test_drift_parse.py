"""DRIFT's tolerant parsing, citation check, queue and budget: pure units, no DB, no network."""

import random

import numpy as np
import pytest

from driftgraph.query.calls import Budget
from driftgraph.query.citations import check_citations, strip_citations
from driftgraph.query.drift.parse import parse_answer
from driftgraph.query.drift.queue import FollowUpQueue, Offer, normalise
from driftgraph.query.drift.stop import PRIMER_NOTE, Agreement, Answer, EpochState, StopRule
from tests.support.drift_fakes import bow_vector


@pytest.mark.parametrize(
    "text",
    [
        '{"response": "ok", "score": 80, "follow_up_queries": ["a?"]}',
        'Here you go:\n```json\n{"response": "ok", "score": 80, "follow_up_queries": ["a?"]}\n```\nThanks',
        'Sure! {"response": "ok", "score": "80", "follow_up_queries": ["a?",],} trailing prose',
        '{"response": "ok", "score": 80.0, "follow_up_queries": [{"query": "a?"}, ""]}',
        '```\n{"response": "ok {braces} inside", "score": 80, "follow_up_queries": "a?"}\n```',
    ],
)
def test_parse_is_tolerant(text):
    p = parse_answer(text, "response")
    assert p.ok, p.error
    assert p.score == 80.0 and p.follow_ups == ["a?"] and p.answer.startswith("ok")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("", "empty"),
        ("no json here", "no JSON object"),
        ('{"response": "x"}', "missing key 'score'"),
        ('{"answer": "x", "score": 3}', "missing key 'response'"),
        ('{"response": "x", "score": "high"}', "not a number"),
        ('{"response": "x", "score": 5', "invalid JSON"),
    ],
)
def test_parse_failures_say_why(text, reason):
    p = parse_answer(text, "response")
    assert not p.ok and reason in (p.error or "")


def test_scores_are_clamped():
    assert parse_answer('{"response": "", "score": 150}', "response").score == 100
    assert parse_answer('{"response": "", "score": -3}', "response").score == 0


def test_citations_keep_only_shown_ids():
    text = "A [Data: Reports (2, 7, +more); Entities (1)] and B [Data: Reports (99)]."
    clean, cites = check_citations(text, {"Reports": {"2", "5"}})
    assert clean == "A [Data: Reports (2, +more)] and B."
    assert cites["valid"] == {"Reports": ["2"]}
    assert cites["invalid"] == {"Reports": ["7", "99"], "Entities": ["1"]}
    assert strip_citations(text) == "A and B."


def test_normalise():
    assert normalise("  What is   Dulce?! ") == normalise("what is dulce") == "what is dulce"
    assert normalise("Ｄｕｌｃｅ") == "dulce"


def _queue(**kw):
    counter = iter(range(1, 1000))
    args = dict(
        dedup_similarity=0.9,
        max_per_answer=3,
        novelty_weight=0.3,
        rng=random.Random(1),
        embed=lambda texts: np.stack([bow_vector(t) for t in texts]),
        new_id=lambda: f"s{next(counter)}",
    )
    args.update(kw)
    return FollowUpQueue(**args)


def test_queue_dedups_exact_semantic_and_against_run_queries():
    q = _queue(max_per_answer=10)
    q.mark_run("s0", "Who leads Operation Dulce?")
    got = q.offer(
        [
            Offer(
                "s0",
                50,
                1,
                [
                    "who leads operation dulce",  # the question itself, normalised
                    "Where is the Dulce base located?",
                    "where is the dulce base located?!",  # exact after normalisation
                    "Where is the Dulce base located",  # same
                    "Located: where is the Dulce base?",  # same words -> cosine 1.0 > 0.9
                    "What did Alex Mercer decide?",
                ],
            )
        ]
    )
    assert [it.query for it in got] == ["Where is the Dulce base located?", "What did Alex Mercer decide?"]
    reasons = [(d["reason"], d.get("duplicate_of")) for d in q.dropped]
    assert reasons[0] == ("duplicate", "s0")
    assert [r for r, _ in reasons].count("similar") == 1
    # later offers are checked against everything accepted before (and what has run)
    again = q.offer([Offer("s1", 60, 2, ["WHERE is the Dulce base located", "What did Taylor Cruz order?"])])
    assert [it.query for it in again] == ["What did Taylor Cruz order?"]


def test_queue_caps_per_answer_and_ranks_by_parent_score():
    q = _queue(max_per_answer=2)
    q.mark_run("s0", "root question")
    q.offer(
        [
            Offer("a", 10, 1, ["alpha one", "alpha two", "alpha three"]),
            Offer("b", 90, 1, ["beta one", "beta two"]),
        ]
    )
    assert [d["reason"] for d in q.dropped] == ["cap"]
    taken = q.take(3)
    assert [it.parent_id for it in taken[:2]] == ["b", "b"]
    assert len(q.pending) == 1


def test_queue_seed_only_breaks_ties():
    def order(seed):
        q = _queue(rng=random.Random(seed), novelty_weight=0.0, max_per_answer=10)
        q.offer([Offer("s0", 50, 1, [f"question number {k}" for k in range(8)])])
        return [it.query for it in q.take(8)]

    assert order(1) == order(1)
    assert order(1) != order(2)  # all priorities tie: the seeded generator decides
    q = _queue(novelty_weight=0.0, max_per_answer=10)
    q.offer([Offer("lo", 10, 1, ["low one"]), Offer("hi", 90, 1, ["high one"])])
    assert [it.query for it in q.take(2)] == ["high one", "low one"]  # no tie: the seed plays no part


def test_budget_never_exceeded_and_hold():
    b = Budget(max_calls=3, max_prompt_tokens=100)
    b.hold(1, 30)
    r1 = b.reserve(40)
    assert r1 is not None
    assert b.reserve(40) is None  # 40 + 40 + 30 held > 100
    b.settle(r1, 50)  # reported usage above the estimate counts, and later estimates scale by 50/40
    assert b.tokens == 50 and b.ratio == 1.25
    # the hold is scaled like every reservation (30 * 1.25 -> 38), so the reduce's own reservation fits it
    assert b.reserve(10) is None  # 10 * 1.25 -> 13: 50 + 13 + 38 held > 100
    assert b.reserve(9).tokens == 12  # 50 + 12 + 38 = 100
    assert b.reserve(1) is None  # 2 calls + 1 held = 3
    b.release_hold()
    assert b.reserve(1) is not None
    assert b.calls == 3 and b.reserve(0) is None


def test_budget_margin_until_calibrated():
    b = Budget(max_calls=10, max_prompt_tokens=1000, first_margin=0.25, margin=0.05)
    first = b.reserve(100)
    assert first is not None and first.tokens == 125  # uncalibrated: a quarter more than our count
    b.settle(first, 110)
    assert b.tokens == 125 and b.ratio == 1.1  # the reservation covered the reply; the ratio is learnt
    assert b.reserve(100).tokens == 116  # 100 * 1.1 * 1.05


def test_stop_rule_order():
    rule = StopRule(sufficient_score=90, min_score_gain=5, max_depth=2)
    agreed = Agreement(1, sufficient=True)
    s = dict(depth=1, best_before=50, best_after=70, queue_size=3, budget_fired=False, calls_left=5)
    assert rule.after_epoch(EpochState(**s)) is None
    assert rule.after_epoch(EpochState(**{**s, "budget_fired": True, "agreement": agreed})) == "budget"
    assert rule.after_epoch(EpochState(**{**s, "calls_left": 0})) == "budget"
    assert rule.after_epoch(EpochState(**{**s, "best_after": 95, "queue_size": 0, "agreement": agreed})) == "sufficient"
    # a score above sufficient_score without corroboration is no reason to stop
    assert rule.after_epoch(EpochState(**{**s, "best_after": 95})) is None
    assert rule.after_epoch(EpochState(**{**s, "best_after": 52, "queue_size": 0})) == "plateau"
    assert rule.after_epoch(EpochState(**{**s, "queue_size": 0, "depth": 2})) == "exhausted"
    assert rule.after_epoch(EpochState(**{**s, "depth": 2})) == "max_depth"
    assert rule.after_epoch(EpochState(**{**s, "depth": 0, "best_before": None, "best_after": 10})) is None
    # after the primer (depth 0) nothing is sufficient, whatever it scored and whatever the agreement says
    primer = {**s, "depth": 0, "best_before": None, "best_after": 100, "agreement": Agreement(0, sufficient=True)}
    assert rule.after_epoch(EpochState(**primer)) is None


def _a(sid: str, epoch: int, score: float, evidence: set[str], text: str = "") -> Answer:
    return Answer(sid, epoch, score, frozenset(evidence), text or f"answer {sid}")


def test_corroborate_needs_a_claim_a_partner_and_a_measure():
    rule = StopRule(sufficient_score=90, min_score_gain=5, max_depth=3)
    primer = _a("s0", 0, 100, {"Reports:r1"})
    # after the primer: the primer's 100 is recorded as a claim, never as sufficient
    check = rule.corroborate(0, [primer], {"s0"})
    assert not check.sufficient and check.claim == ("s0", 100) and check.note == PRIMER_NOTE

    # shared evidence: s1 and s2 cite two of three chunks in common (Jaccard 2/3 >= 0.3)
    s1 = _a("s1", 1, 95, {"Sources:c1", "Sources:c2"})
    s2 = _a("s2", 1, 40, {"Sources:c1", "Sources:c2", "Sources:c3"})
    check = rule.corroborate(1, [primer, s1, s2], {"s1", "s2"})
    assert check.sufficient
    pair = check.agreed[0]
    assert (pair.a, pair.b, pair.measures, pair.shared) == ("s1", "s2", ("evidence",), ("Sources:c1", "Sources:c2"))
    assert round(pair.overlap, 4) == 0.6667 and pair.similarity is None  # no embedder: not measured

    # the same two answers, but no one claims the score: nothing to corroborate, and nothing embedded
    calls: list[list[str]] = []

    def vectors(answers):
        calls.append([a.id for a in answers])
        return np.stack([bow_vector(a.text) for a in answers])

    low = rule.corroborate(1, [_a("s1", 1, 60, {"Sources:c1"}), _a("s2", 1, 40, {"Sources:c1"})], {"s1", "s2"}, vectors)
    assert not low.sufficient and low.compared == 0 and calls == []

    # disjoint evidence, different words: compared, no agreement; the closest miss is kept
    a = _a("s1", 1, 95, {"Sources:c1"}, "the foundry recovered the turbines")
    b = _a("s2", 1, 95, {"Sources:c9"}, "a ferry sank near the harbour in spring")
    miss = rule.corroborate(1, [a, b], {"s1", "s2"}, vectors, failed=["s3"])
    assert not miss.sufficient and miss.compared == 1 and miss.closest is not None and miss.failed == ["s3"]
    assert calls == [["s1", "s2"]]

    # the same words with disjoint evidence: agreement by similarity
    c = _a("s2", 1, 50, {"Sources:c9"}, "the foundry recovered the turbines")
    assert rule.corroborate(1, [a, c], {"s1", "s2"}, vectors).agreed[0].measures == ("similarity",)

    # an embedder that fails leaves similarity unmeasured (and says so); shared evidence still decides
    def broken(answers):
        raise RuntimeError("embedding endpoint down")

    down = rule.corroborate(1, [a, c], {"s1", "s2"}, broken)
    assert not down.sufficient and down.closest.similarity is None
    assert down.to_dict()["similarity_error"] == "RuntimeError: embedding endpoint down"
    assert rule.corroborate(1, [s1, s2], {"s1", "s2"}, broken).sufficient

    # ungrounded answers (citing nothing shown) cannot corroborate, however alike
    u1, u2 = _a("s1", 1, 99, set(), "same words"), _a("s2", 1, 99, set(), "same words")
    check = rule.corroborate(1, [u1, u2], {"s1", "s2"}, vectors)
    assert not check.sufficient and check.ungrounded == ["s1", "s2"] and check.grounded == []

    # a pair of two earlier answers is not new evidence: one of the two must come from the epoch just run
    old = rule.corroborate(2, [s1, s2, _a("s3", 2, 10, {"Sources:c7"})], {"s3"})
    assert not old.sufficient and old.compared == 1  # only (s1, s3): s1 claims, s3 is new
