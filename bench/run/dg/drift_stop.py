"""DRIFT's stop rule holds (issue 37): deterministic scenarios against the fake model, no database, seconds.

python -m bench drift-stop [--out bench/results/raw/drift_stop.json] [--seeds 0,1,2]

Each scenario runs the DRIFT loop with the default ``drift`` settings (tests/support/drift_fakes.py: the fake
OpenAI-compatible server through the real openai client, a bag-of-words embedder, scripted reports and step
contexts in which Source 4 is the same chunk everywhere) and checks what the rule must do:

================  ==========================================================  ====================================
scenario          the model                                                   the rule must
================  ==========================================================  ====================================
primer_100        primer 100 (issue 37's 1.5B model), steps 100, answers in   run an epoch of local searches,
                  words of their own citing chunks of their own                never stop ``sufficient``
agree_evidence    primer 100, steps 95, every step citing the shared chunk    ``sufficient`` after epoch 1, by
                                                                              shared evidence
agree_words       primer 40, steps 95, every step the same sentence           ``sufficient`` after epoch 1, by
                                                                              answer similarity
disagree          primer 70, epochs 90 / 95 / 100, agreeing with nothing      run to ``max_depth`` (3 epochs)
degenerate        steps agree at 60; one repeats a paragraph and claims 100   retry it once, fail it, no score:
                                                                              not sufficient
================  ==========================================================  ====================================

"score-only stop" is the epoch where a rule that trusts the self-score (``score >= sufficient_score``, the rule
before issue 37) would have stopped on the same scores (epoch 0 = right after the primer; a failed step's score
is no claim, hence "-" in degenerate). Every scenario runs twice per seed: the same seed gives the same steps,
scores and stop. Exit status 1 when any check fails; the JSON (``--out``) has every run's stop evidence.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.run.machine import describe

Check = Callable[[Any], list[str]]


def _score(primer: float, steps: Callable[[int], float]) -> Callable[[str, int], float]:
    return lambda q, depth: primer if depth == 0 else steps(depth)


def _local_done(run: Any) -> int:
    return sum(1 for s in run.steps if s.kind == "local" and s.status == "done")


def _check_primer_100(run: Any) -> list[str]:
    bad = []
    if run.stop_reason == "sufficient":
        bad.append("stopped sufficient on answers that agree with nothing")
    if not run.epochs or _local_done(run) == 0:
        bad.append("no local search ran after a primer that scored itself 100")
    if run.stop["checks"][0]["sufficient"]:
        bad.append("the primer's check said sufficient")
    return bad


def _check_agree(measure: str) -> Check:
    def check(run: Any) -> list[str]:
        bad = []
        if run.stop_reason != "sufficient" or [e.depth for e in run.epochs] != [1]:
            bad.append(f"expected sufficient after epoch 1, got {run.stop_reason} after {len(run.epochs)} epochs")
            return bad
        pair = run.stop["checks"][-1]["agreed"][0]
        if measure not in pair["measures"]:
            bad.append(f"agreement by {pair['measures']}, expected {measure}")
        if "s0" in (pair["a"], pair["b"]) and measure == "evidence":
            bad.append("the primer was one of the agreeing pair")
        return bad

    return check


def _check_disagree(run: Any) -> list[str]:
    bad = []
    if run.stop_reason != "max_depth" or len(run.epochs) != 3:
        bad.append(f"expected max_depth after 3 epochs, got {run.stop_reason} after {len(run.epochs)}")
    if any(c["sufficient"] for c in run.stop["checks"]):
        bad.append("a check said sufficient")
    return bad


def _check_degenerate(victim: str) -> Check:
    def check(run: Any) -> list[str]:
        bad = []
        step = next((s for s in run.steps if s.query == victim), None)
        if step is None:
            return ["the repeating step never ran"]
        if step.status != "failed" or step.problems != ["repeated", "repeated"] or step.llm_calls != 2:
            bad.append(f"repeating step: {step.status}, {step.problems}, {step.llm_calls} calls")
        if step.score is not None:
            bad.append("the failed step kept its score")
        if run.stop_reason == "sufficient":
            bad.append("the failed step's 100 made the run sufficient")
        return bad

    return check


def _scenarios() -> dict[str, tuple[Callable[[dict[str, Any]], str], Check]]:
    from tests.support.drift_fakes import (
        REPEATED,
        agreeing_by_evidence,
        agreeing_by_words,
        disagreeing,
        request_kind,
        step_query,
        tree_responder,
    )

    victim = "what about branch 00 item 0 of topic0"
    agreeing = tree_responder(score=_score(40, lambda d: 60), answer=agreeing_by_evidence)

    def degenerate(req: dict[str, Any]) -> str:
        if request_kind(req) == "drift_step" and step_query(req) == victim:
            reply = {"response": f"{REPEATED} [Data: Sources (4)]", "score": 100, "follow_up_queries": []}
            return json.dumps(reply)
        return agreeing(req)

    return {
        "primer_100": (tree_responder(score=_score(100, lambda d: 100), answer=disagreeing), _check_primer_100),
        "agree_evidence": (
            tree_responder(score=_score(100, lambda d: 95), answer=agreeing_by_evidence),
            _check_agree("evidence"),
        ),
        "agree_words": (
            tree_responder(score=_score(40, lambda d: 95), answer=agreeing_by_words),
            _check_agree("similarity"),
        ),
        "disagree": (
            tree_responder(score=_score(70, lambda d: 85 + 5 * d), answer=disagreeing),
            _check_disagree,
        ),
        "degenerate": (degenerate, _check_degenerate(victim)),
    }


def _fingerprint(run: Any) -> list[Any]:
    return [(s.id, s.query, s.status, s.score, s.epoch) for s in run.steps] + [run.stop_reason]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="DRIFT's stop rule, scenario by scenario (fake model, no database)")
    ap.add_argument("--seeds", default="0,1,2", help="comma-separated seeds (default 0,1,2)")
    ap.add_argument("--out", type=Path, default=None, help="write the rows and every run's stop evidence here")
    a = ap.parse_args(argv)

    from tests.support.drift_fakes import drift_cfg, run_loop
    from tests.support.fake_openai import FakeOpenAI

    seeds = [int(x) for x in a.seeds.split(",") if x.strip()]
    cfg = drift_cfg(concurrency=4, dedup_similarity=0.97)
    rows: list[dict[str, Any]] = []
    fake = FakeOpenAI().start()
    try:
        for name, (responder, check) in _scenarios().items():
            fake.responder = responder
            for seed in seeds:
                run, ledger = run_loop(fake, cfg, seed=seed)
                again, _ = run_loop(fake, cfg, seed=seed)
                problems = check(run)
                if _fingerprint(run) != _fingerprint(again):
                    problems.append("the same seed gave a different run")
                last = run.stop["checks"][-1]
                claimed = [c["depth"] for c in run.stop["checks"] if (c["claim"] or {}).get("score", 0) >= 90]
                rows.append(
                    {
                        "scenario": name,
                        "seed": seed,
                        "stop_reason": run.stop_reason,
                        "epochs": len(run.epochs),
                        "primer_score": run.steps[0].score,
                        "steps_done": _local_done(run),
                        "steps_failed": sum(1 for s in run.steps if s.status == "failed"),
                        "chat_calls": ledger.total.llm_calls,
                        "claim": last["claim"],
                        # where the old rule (a score >= sufficient_score stops) would have stopped on these scores
                        "self_score_would_stop_at": claimed[0] if claimed else None,
                        "agreed": last["agreed"][:1],
                        "summary": run.stop["summary"],
                        "holds": not problems,
                        "problems": problems,
                        "stop": run.stop,
                    }
                )
    finally:
        fake.stop()
    head = f"{'scenario':<15} {'seed':>4} {'stop':<11} {'epochs':>6} {'done':>5} {'failed':>6} {'calls':>5}"
    print(f"{head} {'score-only stop':>15}  holds")
    for r in rows:
        mark = "yes" if r["holds"] else "NO: " + "; ".join(r["problems"])
        old = "-" if r["self_score_would_stop_at"] is None else f"epoch {r['self_score_would_stop_at']}"
        print(
            f"{r['scenario']:<15} {r['seed']:>4} {r['stop_reason']:<11} {r['epochs']:>6} {r['steps_done']:>5} "
            f"{r['steps_failed']:>6} {r['chat_calls']:>5} {old:>15}  {mark}"
        )
    held = all(r["holds"] for r in rows)
    print(f"\nthe stop rule {'holds' if held else 'does NOT hold'} in {sum(r['holds'] for r in rows)}/{len(rows)} runs")
    if a.out is not None:
        out = {
            "part": "drift-stop",
            "drift": cfg.model_dump(),
            "seeds": seeds,
            "machine": describe(),
            "holds": held,
            "rows": rows,
        }
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text(json.dumps(out, indent=2, default=str))
    return 0 if held else 1
