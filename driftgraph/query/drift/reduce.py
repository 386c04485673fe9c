"""The reduce: one capped call that turns the step answers into the final answer, citing steps by id.

Its call and its prompt tokens are held back from the start of the run (``reduce_hold_tokens``), so the
budget that stops the loop never leaves the run without room for its answer. Step answers enter best
first (the primer first) until ``reduce_context_tokens`` is used; the rest are listed as dropped.

The answer is checked like every mode's (``query/answer.py``): one that is no answer is retried once with a
corrective instruction (a call of the budget, not held back: no budget left, no retry), and when it still
fails the reduce ends ``bad_answer`` (``trace.reduce.check``), which ``finish`` turns into the run's
``stop_reason`` (``reduce_check``). A reply is cut at ``max_tokens`` by its finish reason where the call's
result keeps it (``JobResult.truncated``), else when the server counted that many completion tokens.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from driftgraph.config import DriftConfig, PromptsConfig
from driftgraph.errors import CallFailed, OverBudget
from driftgraph.prompts import render_prompt
from driftgraph.query.answer import AnswerCheck, Reply, TokenSink, checked_answer
from driftgraph.query.citations import check_citations, strip_citations
from driftgraph.query.drift.backend import DriftBackend, count_messages
from driftgraph.query.drift.calls import Caller, Job
from driftgraph.query.drift.model import DriftRun, Step
from driftgraph.query.result import ContextInfo


def _prompt(question: str, answers: str, cfg: DriftConfig, prompts: PromptsConfig) -> str:
    return render_prompt("drift_reduce", prompts, question=question, response_type=cfg.response_type, answers=answers)


def reduce_hold_tokens(question: str, cfg: DriftConfig, prompts: PromptsConfig, backend: DriftBackend) -> int:
    """Prompt tokens the reduce may need: its template and question plus the answers' allowance."""
    empty = count_messages(backend, [{"role": "user", "content": _prompt(question, "", cfg, prompts)}])
    return empty + cfg.reduce_context_tokens


def _block(step: Step) -> str:
    score = "?" if step.score is None else f"{step.score:g}"
    answer = strip_citations(step.answer or "").strip()
    return f"## Step {step.id} (score {score})\nQuestion: {step.query}\nAnswer: {answer}"


@dataclass
class ReduceInput:
    text: str
    shown: set[str]
    dropped: list[str]
    tokens: int


def reduce_input(run: DriftRun, cfg: DriftConfig, count_tokens: Callable[[str], int]) -> ReduceInput:
    """The step answers the reduce reads: the primer first, then best score first, within the allowance."""
    done = [s for s in run.steps if s.status == "done" and s.answer]
    done.sort(key=lambda s: (s.id != "s0", -(s.score or 0.0), int(s.id[1:])))
    used, blocks, shown, dropped = 0, [], set(), []
    for step in done:
        block = _block(step)
        tokens = count_tokens(block) + 2
        if used + tokens <= cfg.reduce_context_tokens:
            blocks.append(block)
            shown.add(step.id)
            used += tokens
        else:
            dropped.append(step.id)
    return ReduceInput("\n\n".join(blocks), shown, dropped, used)


def tree_text(run: DriftRun, count_tokens: Callable[[str], int], cfg: DriftConfig) -> ContextInfo:
    """The envelope's ``context``: what the reduce reads (or would read, with the reduce off)."""
    inp = reduce_input(run, cfg, count_tokens)
    return ContextInfo(inp.text, count_tokens(inp.text) if inp.text else 0, cfg.reduce_context_tokens)


def run_reduce(
    run: DriftRun,
    cfg: DriftConfig,
    prompts: PromptsConfig,
    backend: DriftBackend,
    caller: Caller,
    on_token: Callable[[str], None] | None,
) -> tuple[str | None, dict[str, Any]]:
    """``(answer, reduce_info)``; with no usable step or no budget the answer is None and info says why."""
    inp = reduce_input(run, cfg, backend.count_tokens)
    shown = inp.shown
    info: dict[str, Any] = {
        "steps": sorted(shown, key=lambda x: int(x[1:])),
        "dropped": inp.dropped,
        "tokens": inp.tokens,
    }
    if not inp.text:
        info["status"] = "skipped"
        info["error"] = "no step produced an answer"
        return None, info
    prompt = _prompt(run.question, inp.text, cfg, prompts)
    info.update(calls=0, prompt_tokens=0, completion_tokens=0)

    def ask(messages: list[dict[str, str]], max_tokens: int, sink: TokenSink | None) -> Reply:
        res = caller.run([Job(messages, "reduce", max_tokens, on_token=sink)], after_stop=True)[0]
        info["calls"] += res.calls
        info["prompt_tokens"] += res.prompt_tokens
        info["completion_tokens"] += res.completion_tokens
        if res.status == "skipped":
            raise OverBudget(res.error or "no budget left for the reduce")
        if res.status != "done":
            raise CallFailed(res.error or "the reduce call failed")
        cut = getattr(res, "truncated", None)  # the finish reason, where the caller keeps it
        return _Reply(res.text, bool(cut) if cut is not None else res.completion_tokens >= max_tokens)

    messages = [{"role": "user", "content": prompt}]
    try:
        check = checked_answer(
            ask, messages, cfg.reduce_max_tokens, prompts=prompts, count_tokens=backend.count_tokens, on_token=on_token
        )
    except (OverBudget, CallFailed) as err:
        info["status"] = "skipped" if isinstance(err, OverBudget) else "failed"
        info["error"] = str(err) if isinstance(err, CallFailed) else "no budget left for the reduce"
        return None, info
    info["attempts"] = len(check.attempts)
    if check.eventful:
        info["check"] = check.to_dict()
    if check.answer is None:
        info["status"] = "bad_answer"
        info["error"] = check.note()
        info["loop_stop_reason"] = run.stop_reason  # the run's stop_reason becomes bad_answer (``reduce_check``)
        return None, info
    text, cites = check_citations(check.answer.strip(), {"Steps": shown})
    info["status"] = "done"
    info["citations"] = cites
    return text, info


@dataclass(frozen=True)
class _Reply:
    text: str
    truncated: bool


def reduce_check(reduce: dict[str, Any] | None) -> AnswerCheck | None:
    """The reduce's answer check as ``finish`` takes it (``Ending.check``), from ``trace.reduce``."""
    if not reduce or "check" not in reduce:
        return None
    return AnswerCheck.from_dict(reduce["check"])
