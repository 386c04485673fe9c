"""DRIFT's stop rule does not take the model's word for it (issue 37), and degenerate step replies are retried
once, then failed. The loop runs against the fake OpenAI server through the real openai client (no DB).

- a primer that scores itself 100 no longer stops the run before any local search;
- answers that agree (shared cited evidence, or the same words) stop it ``sufficient``, with the evidence in
  ``run.stop``;
- answers that claim 100 but agree with nothing run on to the depth limit or the budget;
- an empty, citation-only, repeated or cut reply is retried once with the corrective prompt, then failed,
  and a failed step's self-score counts nowhere.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from driftgraph.query.drift.stop import PRIMER_NOTE
from driftgraph.view.modes import drift_card
from tests.support.drift_fakes import (
    COMMON_CHUNK,
    LENGTH,
    REPEATED,
    CappedFake,
    agreeing_by_evidence,
    agreeing_by_words,
    disagreeing,
    drift_cfg,
    is_repair,
    request_kind,
    run_loop,
    step_query,
    tree_responder,
)

Responder = Callable[[dict[str, Any]], str]


def _score(primer: float, steps: Callable[[int], float]) -> Callable[[str, int], float]:
    return lambda q, depth: primer if depth == 0 else steps(depth)


def _phases(ledger) -> dict[str, int]:
    return {ph: c.llm_calls for ph, c in ledger.phases.items()}


def _step_reply(req: dict[str, Any], response: str, score: float = 100) -> str:
    return json.dumps({"response": response, "score": score, "follow_up_queries": []})


# -- (a) the primer's 100 is not enough ---------------------------------------------------------------------
def test_a_primer_scoring_100_does_not_stop_the_run_before_local_search(fake_llm):
    """Issue 37's run: the model gives its primer 100 and every step 100, and the answers corroborate nothing.
    Before: ``sufficient`` after the primer, no step run, every follow-up uncovered. Now an epoch runs."""
    fake_llm.responder = tree_responder(score=_score(100, lambda d: 100), answer=disagreeing)
    run, ledger = run_loop(fake_llm, drift_cfg())  # the defaults: sufficient 90, min gain 5, 8 steps an epoch
    assert run.steps[0].score == 100 and run.steps[0].status == "done"
    assert run.stop_reason != "sufficient"
    local = [s for s in run.steps if s.kind == "local" and s.status == "done"]
    assert len(local) == 8 and _phases(ledger)["steps"] == 8
    first, after = run.stop["checks"][0], run.stop["checks"][1]
    assert first["depth"] == 0 and first["claim"] == {"step": "s0", "score": 100} and not first["sufficient"]
    assert first["note"] == PRIMER_NOTE
    assert after["depth"] == 1 and not after["sufficient"] and after["agreed"] == [] and after["compared"] > 0
    # every step claims 100, so the score cannot rise: the plateau rule (score-based, unchanged) ends the run
    assert run.stop_reason == "plateau" and run.stop["reason"] == "plateau"
    assert "not sufficient" in run.stop["summary"]


def test_a_primer_scoring_100_stops_sufficient_only_once_an_epoch_corroborates(fake_llm):
    fake_llm.responder = tree_responder(score=_score(100, lambda d: 95), answer=agreeing_by_evidence)
    run, ledger = run_loop(fake_llm, drift_cfg())
    assert run.stop_reason == "sufficient"
    assert [e.depth for e in run.epochs] == [1] and _phases(ledger)["steps"] == 8
    first, check = run.stop["checks"][0], run.stop["checks"][-1]
    assert not first["sufficient"] and first["claim"]["score"] == 100
    assert check["sufficient"] and check["agreed"][0]["a"] != "s0"  # two local searches, not the primer's word


# -- (b) agreeing answers stop sufficient -------------------------------------------------------------------
def test_answers_citing_the_same_evidence_stop_sufficient(fake_llm):
    fake_llm.responder = tree_responder(score=_score(40, lambda d: 95), answer=agreeing_by_evidence)
    run, _ = run_loop(fake_llm, drift_cfg())
    assert run.stop_reason == "sufficient" and [e.depth for e in run.epochs] == [1]
    check = run.stop["checks"][-1]
    assert check["sufficient"] and check["depth"] == 1
    pair = check["agreed"][0]
    assert pair["measures"][0] == "evidence" and pair["shared"] == [f"Sources:{COMMON_CHUNK}"]
    assert pair["evidence_overlap"] == 1.0
    assert {pair["a"], pair["b"]} <= {s.id for s in run.steps if s.epoch == 1}
    assert run.stop["summary"].startswith("epoch 1: ") and "agree by evidence" in run.stop["summary"]
    assert run.epochs[0].sufficient == {"met": True, "note": check["note"]}
    assert run.uncovered  # the queue still held follow-ups: the stop was the rule's, not the queue's


def test_answers_saying_the_same_thing_stop_sufficient_by_similarity(fake_llm):
    fake_llm.responder = tree_responder(score=_score(40, lambda d: 95), answer=agreeing_by_words)
    run, _ = run_loop(fake_llm, drift_cfg())
    assert run.stop_reason == "sufficient"
    pair = run.stop["checks"][-1]["agreed"][0]
    assert pair["measures"] == ["similarity"] and pair["similarity"] >= 0.99 and "shared" not in pair


def test_agreement_without_a_claim_is_not_sufficient(fake_llm):
    """Agreement is the check of a claim, not a reason of its own: answers that agree at 60 go on."""
    fake_llm.responder = tree_responder(score=_score(40, lambda d: 40 + 10 * d), answer=agreeing_by_evidence)
    run, _ = run_loop(fake_llm, drift_cfg(max_depth=2))
    assert run.stop_reason == "max_depth"
    assert all("nothing to corroborate" in c["note"] for c in run.stop["checks"][1:])


# -- (c) disagreeing answers run to the limit ---------------------------------------------------------------
def test_answers_that_disagree_run_until_the_depth_limit(fake_llm):
    # every epoch claims more than sufficient_score and raises the best by 5 (no plateau), nothing agrees
    fake_llm.responder = tree_responder(score=_score(70, lambda d: 85 + 5 * d), answer=disagreeing)
    run, ledger = run_loop(fake_llm, drift_cfg(follow_ups_per_epoch=3, max_llm_calls=50))
    assert run.stop_reason == "max_depth" and [e.depth for e in run.epochs] == [1, 2, 3]
    checks = run.stop["checks"][1:]
    assert [c["claim"]["score"] for c in checks] == [90, 95, 100]  # claimed every epoch ...
    assert all(not c["sufficient"] and c["compared"] > 0 and c["agreed"] == [] for c in checks)  # ... never shown
    assert all("closest" in c and c["closest"]["evidence_overlap"] == 0 for c in checks)
    assert _phases(ledger)["steps"] == 9


def test_answers_that_disagree_run_until_the_budget(fake_llm):
    fake_llm.responder = tree_responder(score=_score(100, lambda d: 100), answer=disagreeing)
    run, ledger = run_loop(fake_llm, drift_cfg(min_score_gain=0, max_depth=5, max_llm_calls=12))
    assert run.stop_reason == "budget" and ledger.total.llm_calls == 12
    assert not any(c["sufficient"] for c in run.stop["checks"])


# -- (d) degenerate replies -----------------------------------------------------------------------------------
def _broken(base: Responder, bad: Callable[[dict[str, Any], str], str | None]) -> Responder:
    """``base``, except where ``bad(request, step query)`` returns a reply."""

    def respond(req: dict[str, Any]) -> str:
        if request_kind(req) == "drift_step":
            reply = bad(req, step_query(req))
            if reply is not None:
                return reply
        return base(req)

    return respond


def test_a_repeated_paragraph_is_retried_then_failed_and_its_score_never_counts(fake_llm):
    """The steps agree by evidence but score 60; one step repeats itself and claims 100 twice: it fails, and
    its 100 neither makes the run sufficient nor counts as an epoch's best."""
    base = tree_responder(score=_score(40, lambda d: 60), answer=agreeing_by_evidence)
    victim = "what about branch 00 item 0 of topic0"
    retry_prompts: list[str] = []

    def bad(req: dict[str, Any], query: str) -> str | None:
        if query != victim:
            return None
        if is_repair(req):
            retry_prompts.append(req["messages"][-1]["content"])
        return _step_reply(req, f"{REPEATED} [Data: Sources (4)]")

    fake_llm.responder = _broken(base, bad)
    run, ledger = run_loop(fake_llm, drift_cfg(max_depth=1))
    step = next(s for s in run.steps if s.query == victim)
    assert step.status == "failed" and step.score is None and step.llm_calls == 2
    assert step.retried and step.problems == ["repeated", "repeated"]
    assert "degenerate answer (repeated)" in step.error and "after one retry" in step.error
    assert len(retry_prompts) == 1 and "could not be used" in retry_prompts[0] and "repeated" in retry_prompts[0]
    assert run.stop_reason == "max_depth"  # not sufficient: no answer that counts claims 90
    check = run.stop["checks"][1]
    assert step.id in check["failed"] and step.id not in check["grounded"]
    assert check["claim"]["score"] == 60 and run.epochs[0].best_score == 60 and run.epochs[0].failed == 1
    assert run.stop["failed_steps"] == [step.id]
    assert ledger.total.llm_calls == len(fake_llm.chat_requests())
    assert step.to_dict()["problems"] == ["repeated", "repeated"] and step.to_dict()["retried"] is True


def test_a_degenerate_reply_that_the_retry_fixes_is_an_answer(fake_llm):
    base = tree_responder(score=_score(40, lambda d: 60), answer=disagreeing)
    cases = {
        "what about branch 00 item 0 of topic0": "[Data: Sources (1, 2)]",  # citations only
        "what about branch 00 item 1 of topic1": "   ",  # empty
    }

    def bad(req: dict[str, Any], query: str) -> str | None:
        if query in cases and not is_repair(req):
            return _step_reply(req, cases[query])
        return None

    fake_llm.responder = _broken(base, bad)
    run, _ = run_loop(fake_llm, drift_cfg(max_depth=1))
    fixed = {s.query: s for s in run.steps if s.query in cases}
    assert fixed[list(cases)[0]].problems == ["citations_only"]
    assert fixed[list(cases)[1]].problems == ["empty"]
    assert all(s.status == "done" and s.retried and not s.repaired and s.llm_calls == 2 for s in fixed.values())
    assert all(s.score == 60 and s.answer and s.answer.startswith("w") for s in fixed.values())


def test_a_reply_cut_at_max_tokens_is_retried_then_failed():
    """Cut at max_tokens (``finish_reason: length``): a JSON repair would be cut at the same place, so the
    retry asks for a shorter answer; cut again, the step fails."""
    fake = CappedFake().start()
    try:
        base = tree_responder(score=_score(40, lambda d: 60), answer=disagreeing)
        victim = "what about branch 00 item 2 of topic2"
        once = "what about branch 00 item 1 of topic1"

        def bad(req: dict[str, Any], query: str) -> str | None:
            if query == victim:
                return '{"response": "The council began to' + LENGTH  # cut mid-JSON, twice
            if query == once and not is_repair(req):
                return _step_reply(req, disagreeing(query, 1)) + LENGTH  # whole, but flagged cut: retried
            return None

        fake.responder = _broken(base, bad)
        run, _ = run_loop(fake, drift_cfg(max_depth=1))
    finally:
        fake.stop()
    cut = next(s for s in run.steps if s.query == victim)
    assert cut.status == "failed" and cut.problems == ["truncated", "truncated"] and cut.llm_calls == 2
    assert "cut off at the max_tokens limit" in cut.error
    again = next(s for s in run.steps if s.query == once)
    assert again.status == "done" and again.problems == ["truncated"] and again.retried


def test_a_degenerate_primer_fold_is_retried_and_recorded(fake_llm):
    base = tree_responder(score=_score(100, lambda d: 60), answer=disagreeing)
    seen: list[str] = []

    def respond(req: dict[str, Any]) -> str:
        if request_kind(req) == "drift_primer":
            seen.append("retry" if is_repair(req) else "first")
            reply = json.loads(base(req))
            reply["intermediate_answer"] = "[Data: Reports (1)]"  # citations only, first time and after the retry
            return json.dumps(reply)
        return base(req)

    fake_llm.responder = respond
    run, _ = run_loop(fake_llm, drift_cfg(max_depth=1))
    folds = run.primer["folds"]
    assert all(f["status"] == "failed" and f["retried"] and f["problems"] == ["citations_only"] * 2 for f in folds)
    assert seen.count("first") == seen.count("retry") == len(folds)
    root = run.steps[0]
    assert root.status == "failed" and root.score is None  # its 100s were never an answer
    assert run.stop["checks"][0]["failed"] == ["s0"] and run.stop["checks"][0]["claim"] is None


# -- the evidence on the retrieval page -----------------------------------------------------------------------
def test_the_retrieval_page_shows_the_stop_evidence(fake_llm):
    fake_llm.responder = tree_responder(score=_score(40, lambda d: 95), answer=agreeing_by_evidence)
    run, _ = run_loop(fake_llm, drift_cfg())
    ret = {"stop_reason": run.stop_reason, "params": run.limits, "seed": run.seed}
    steps = [s.to_dict() for s in run.steps]
    html = drift_card(ret, {"stop": run.stop, "primer": run.primer}, {"steps": steps})
    pair = run.stop["checks"][-1]["agreed"][0]
    assert 'id="stop-evidence"' in html
    assert f"{pair['a']} and {pair['b']} agree by evidence" in html and f"Sources:{COMMON_CHUNK}" in html
    assert "epoch 0" in html and "never stops the run" in html  # the primer's check is shown too
    # an old trace without ``stop`` still renders, without the section
    assert 'id="stop-evidence"' not in drift_card(ret, {"primer": run.primer}, {"steps": steps})
