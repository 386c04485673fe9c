"""The DRIFT loop against the fake OpenAI server through the real openai client (no DB): determinism under
scrambled completion order, budget accounting, de-duplication, repair, and each of the five stop reasons
(``sufficient``'s evidence in detail: tests/test_drift_stop.py)."""

import json

from driftgraph.query.drift.queue import normalise
from tests.support.drift_fakes import (
    drift_cfg,
    h,
    is_repair,
    request_kind,
    run_loop,
    sequence,
    step_query,
    tree_responder,
)


def _scramble(seed):
    return lambda req: ((h(json.dumps(req["messages"])) + seed) % 7) * 0.004


def test_same_seed_same_steps_whatever_the_completion_order(fake_llm):
    answered: list[str] = []  # the responder runs after the delay: this is the completion order
    base = tree_responder()

    def respond(req):
        answered.append(step_query(req))
        return base(req)

    fake_llm.responder = respond
    cfg = drift_cfg(max_depth=2, follow_ups_per_epoch=6, min_score_gain=0, max_llm_calls=30, concurrency=6)
    fake_llm.delay = _scramble(0)
    first, _ = run_loop(fake_llm, cfg, seed=11)
    order_one, answered[:] = list(answered), []
    fake_llm.delay = _scramble(3)  # different delays -> a different completion order
    second, _ = run_loop(fake_llm, cfg, seed=11)
    order_two = list(answered)
    assert sorted(order_one) == sorted(order_two) and order_one != order_two
    assert sequence(first) == sequence(second)
    assert [s.score for s in first.steps] == [s.score for s in second.steps]
    assert first.stop_reason == second.stop_reason
    assert len([s for s in first.steps if s.status == "done"]) > 8
    assert first.answer == second.answer


def test_ledger_matches_server_and_respects_max_llm_calls(fake_llm):
    fake_llm.responder = tree_responder()
    for limit in (3, 6, 9, 14):
        fake_llm.requests.clear()
        run, ledger = run_loop(fake_llm, drift_cfg(max_llm_calls=limit, min_score_gain=0, max_depth=5))
        assert ledger.total.llm_calls == len(fake_llm.chat_requests()) <= limit
        assert run.budget["llm_calls"] == ledger.total.llm_calls
        assert run.stop_reason == "budget"
        assert run.answer is not None  # the reduce call was held back from the start


def test_prompt_token_budget_is_never_exceeded(fake_llm):
    fake_llm.responder = tree_responder()
    for limit in (2500, 4000, 6000):
        fake_llm.requests.clear()
        run, ledger = run_loop(fake_llm, drift_cfg(max_prompt_tokens=limit, min_score_gain=0, max_depth=5))
        assert run.stop_reason == "budget"
        assert ledger.total.prompt_tokens <= run.budget["prompt_tokens"] <= limit


def test_no_two_executed_steps_share_a_normalised_query(fake_llm):
    def respond(req):
        kind = request_kind(req)
        if kind in ("hyde", "reduce"):
            return "text"
        key = "intermediate_answer" if kind == "drift_primer" else "response"
        # every answer proposes the same questions in different spellings
        return json.dumps(
            {
                key: "a",
                "score": 50,
                "follow_up_queries": [
                    "What is the Dulce base?",
                    "what is the dulce base",
                    "WHAT IS THE DULCE BASE?!",
                    "Who is Alex Mercer?",
                    "who is alex mercer",
                    "What connects topic1 and topic2?",
                ],
            }
        )

    fake_llm.responder = respond
    run, _ = run_loop(fake_llm, drift_cfg(min_score_gain=0, max_depth=3))
    executed = [normalise(s.query) for s in run.executed()]
    assert len(executed) == len(set(executed)) == 3  # the question + two distinct follow-ups
    assert run.stop_reason == "exhausted"
    assert {d["reason"] for d in run.dropped_follow_ups} == {"duplicate"}


def test_malformed_answer_gets_one_repair_then_fails_without_killing_the_run(fake_llm):
    base = tree_responder(n_follow=2)

    def respond(req):
        kind = request_kind(req)
        if kind == "drift_step":
            q = req["messages"][0]["content"]
            if "part 0" in q and "then" in q.split("Follow-up question of this step:")[1]:
                return "I cannot answer in JSON, sorry."  # always malformed, even after the repair
            if not is_repair(req) and "item 1" in q.split("Follow-up question of this step:")[1]:
                return '```json\n{"response": "fixed later", "score": 10, "follow_up_queries": [\n```'
        return base(req)

    fake_llm.responder = respond
    run, ledger = run_loop(fake_llm, drift_cfg(min_score_gain=0, max_depth=2, max_llm_calls=40))
    repaired = [s for s in run.steps if s.repaired]
    failed = [s for s in run.steps if s.status == "failed"]
    assert repaired and all(s.status == "done" and s.llm_calls == 2 for s in repaired)
    assert failed and all("malformed answer after one repair" in s.error for s in failed)
    assert all(s.llm_calls == 2 for s in failed)
    assert run.stop_reason == "max_depth"
    assert ledger.total.llm_calls == len(fake_llm.chat_requests())


def test_citations_are_checked_against_what_was_shown(fake_llm):
    fake_llm.responder = tree_responder()
    run, _ = run_loop(fake_llm, drift_cfg(max_depth=1, min_score_gain=0))
    root = run.steps[0]
    assert "9999" not in root.answer
    step = next(s for s in run.steps if s.status == "done" and s.id != "s0")
    assert step.citations["invalid"] == {"Sources": ["7"]} and "Sources (1)" in step.answer
    assert "s999" not in run.answer and "Steps (s0" in run.answer
    cites, shown = run.reduce["citations"], set(run.reduce["steps"])
    assert "s999" in cites["invalid"]["Steps"] and set(cites["valid"]["Steps"]) <= shown
    assert set(cites["invalid"]["Steps"]) & shown == set()


# -- each of the five stop reasons ------------------------------------------------------------------------
def test_stop_budget(fake_llm):
    fake_llm.responder = tree_responder()
    run, ledger = run_loop(fake_llm, drift_cfg(max_llm_calls=8, min_score_gain=0, max_depth=5))
    assert run.stop_reason == "budget"
    assert ledger.total.llm_calls == 8
    assert run.uncovered  # follow-ups that never ran are listed


def test_stop_sufficient(fake_llm):
    # epoch 2 claims 90; its answers ("answer to Q then part k") are near-identical texts, so they agree by
    # similarity (tests/test_drift_stop.py: each measure, and what does not stop the run)
    fake_llm.responder = tree_responder(score=lambda q, depth: 40 + 25 * depth)
    run, _ = run_loop(fake_llm, drift_cfg(sufficient_score=85, max_depth=5))
    assert run.stop_reason == "sufficient"
    assert [e.depth for e in run.epochs] == [1, 2]
    assert run.epochs[-1].best_score == 90
    check = run.stop["checks"][-1]
    assert check["depth"] == 2 and check["sufficient"] and "similarity" in check["agreed"][0]["measures"]
    assert not run.stop["checks"][1]["sufficient"]  # epoch 1 claimed 65 < 85: nothing to corroborate


def test_stop_plateau(fake_llm):
    fake_llm.responder = tree_responder(score=lambda q, depth: 60)
    run, _ = run_loop(fake_llm, drift_cfg(min_score_gain=5, max_depth=5))
    assert run.stop_reason == "plateau"
    assert len(run.epochs) == 1


def test_stop_exhausted(fake_llm):
    fake_llm.responder = tree_responder(n_follow=2, max_level=1)
    run, _ = run_loop(fake_llm, drift_cfg(min_score_gain=0, max_depth=5, follow_ups_per_epoch=10))
    assert run.stop_reason == "exhausted"
    assert not run.uncovered
    assert max(s.depth for s in run.steps) == 2


def test_stop_max_depth(fake_llm):
    fake_llm.responder = tree_responder()
    run, ledger = run_loop(fake_llm, drift_cfg(max_depth=2, follow_ups_per_epoch=3, max_llm_calls=50))
    assert run.stop_reason == "max_depth"
    assert [e.depth for e in run.epochs] == [1, 2] and all(e.ran == 3 for e in run.epochs)
    # 1 HyDE + primer folds + 2 epochs x 3 + 1 reduce
    folds = len(run.primer["folds"])
    assert ledger.total.llm_calls == 1 + folds + 6 + 1
    assert {ph: c.llm_calls for ph, c in ledger.phases.items()} == {"hyde": 1, "primer": folds, "steps": 6, "reduce": 1}


def test_primer_only_and_no_reduce(fake_llm):
    fake_llm.responder = tree_responder()
    run, ledger = run_loop(fake_llm, drift_cfg(max_depth=0, reduce=False, hyde=False))
    assert run.stop_reason == "max_depth"
    assert run.answer is None and run.reduce is None
    assert set(ledger.phases) == {"primer"}
    assert all(s.status == "uncovered" for s in run.steps[1:])


def test_a_failing_call_fails_its_step_not_the_run(fake_llm):
    fake_llm.responder = tree_responder()
    fake_llm.fail_next = [400]  # the HyDE call is refused (not retryable)
    run, ledger = run_loop(fake_llm, drift_cfg(max_depth=1, min_score_gain=0))
    assert run.hyde["status"] == "failed" and "400" in run.hyde["error"]
    assert run.steps[0].status == "done"  # the primer searched with the question itself
    assert run.stop_reason == "max_depth" and run.answer
    assert run.budget["llm_calls"] == ledger.total.llm_calls + 1  # the refused call still counted against the budget
