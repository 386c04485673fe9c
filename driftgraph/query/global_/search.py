"""Global search: select reports (a level cut, or a rated descent), map them in batches, reduce the best points.

Budgets are derived from the deployment like local search's (``query/budget.py``):

    map batch  = min(window - map_max_tokens - map prompt - question, map_cap)
    reduce     = min(window - answer_reserve - reduce prompt - question, reduce_cap)

``--budget`` fixes both (GraphRAG's single ``max_context_tokens`` plays the same double role). Points scoring
below ``min_score`` (always 0) are dropped; the rest enter the reduce prompt best first, item by item, until
the reduce budget is full. The trace lists every report visited with the stage it reached (listed / rated /
mapped / used), its rating, batch and points, and why it was dropped.

A failed map is never read as an absence of information (issue 37): when no batch gave a usable reply
(malformed after its repair, or failed at the endpoint) the question ends as ``map_failed`` (``AnswerFailed``,
no answer); when some did not, the answer opens with ``prompts/partial_map_note.txt`` (how many batches of how
many, and why) and ``stop_reason`` is ``partial_map``. ``no_relevant_points`` means every batch was read and
none found anything. Likewise a dynamic selection whose every rating reply was unusable ends ``rate_failed``.
The reduce's answer is checked like every mode's (``query/answer.py``).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from driftgraph.errors import LLMError, OverBudget
from driftgraph.prompts import render_prompt
from driftgraph.query.answer import AnswerCheck, Reply, TokenSink, checked_chat_answer
from driftgraph.query.budget import BudgetBreakdown, Candidate, Demand, derive_budget, fill
from driftgraph.query.citations import map_citations
from driftgraph.query.finish import Ending, error_info, finish
from driftgraph.query.global_.gate import CallGate
from driftgraph.query.global_.map import MapBatch, MapOutcome, Point, make_batches, map_prompt, run_map
from driftgraph.query.global_.result import GlobalResult
from driftgraph.query.global_.select import ReportState, Selection, select_dynamic, select_level
from driftgraph.query.requests import GlobalQuery
from driftgraph.query.result import ContextInfo
from driftgraph.query.standalone import standalone
from driftgraph.query.trace import Trace, TraceItem

if TYPE_CHECKING:
    from driftgraph.config import GlobalConfig
    from driftgraph.runtime import Runtime


def render_point(point: Point) -> str:
    refs = ", ".join(str(s) for s in point.short_ids)
    return f"----- Key point (importance {point.score}; Reports ({refs})) -----\n{point.description}"


def global_search(rt: Runtime, request: GlobalQuery, *, on_token: Callable[[str], None] | None = None) -> GlobalResult:
    """Answer the request's question from the community reports; level/dynamic/seed override the config."""
    settings = request.settings(rt.config)
    started = time.perf_counter()
    # multi-turn: a follow-up is rewritten first (local's history keys); the call counts against the budget
    rewrite, spent = standalone(rt, request.question, request.history, rt.config.local)
    if spent["llm_calls"]:
        settings = settings.model_copy(
            update={
                "max_llm_calls": max(1, settings.max_llm_calls - spent["llm_calls"]),
                "max_prompt_tokens": max(1000, settings.max_prompt_tokens - spent["prompt_tokens"]),
            }
        )
    question, budget = (rewrite.query if rewrite else request.question), request.budget
    level, dynamic, seed = settings.level, settings.dynamic, settings.seed
    recorder = Trace("global", question)
    recorder.rewrite = rewrite
    map_budget, reduce_budget = _budgets(rt, settings, question, budget)
    gate = CallGate(rt, settings)
    gate.budget.hold(1, gate.count(_reduce_messages(rt, settings, "", question)) + reduce_budget.context)

    selection = select_dynamic(rt, question, settings, level, gate) if dynamic else select_level(rt, level)
    selected_at = time.perf_counter()
    batches = make_batches(selection.selected, selection.states, map_budget.context, random.Random(seed), rt)
    for batch in batches:
        for _, report in batch.reports:
            state = selection.states[report.id]
            state.stage, state.batch = "mapped", batch.index
    run_map(rt, question, settings, batches, gate)
    mapped_at = time.perf_counter()

    points = [p for b in batches for p in b.points]
    kept, point_trace, context = _reduce_context(rt, settings, points, reduce_budget.context)
    gate.release()
    outcome = MapOutcome(batches, settings.repair_retries)
    error: LLMError | None = gate.errors[0] if gate.all_failed else None
    check: AnswerCheck | None = None
    if error is not None:  # every rating / map call failed: an endpoint error, not "nothing relevant"
        answer, stop_reason = None, "error"
    elif outcome.unusable:  # no batch was read: never "the data does not contain enough information"
        answer, stop_reason, error = None, "map_failed", outcome.error()
    elif selection.ratings_unusable:  # dynamic: no rating could be read, so nothing was selected
        answer, stop_reason, error = None, "rate_failed", selection.rating_error()
    else:
        note = outcome.note(rt.config.prompts, len(selection.selected)) if outcome.lost else None
        if note is not None and on_token is not None:
            on_token(note + "\n\n")  # said before the answer, so a streamed answer is read with it
        reduce = _reduce_messages(rt, settings, context.text, question) if kept else None
        answer, stop_reason, check = _answer(rt, settings, reduce, on_token, gate)
        if note is not None and answer is not None:
            answer, stop_reason = f"{note}\n\n{answer}", "partial_map"
    if outcome.lost:
        recorder.notes.append(outcome.summary())
    _finish_states(selection, batches, points, kept, settings.min_score)

    recorder.budget = reduce_budget
    recorder.citations = map_citations(
        (answer or "") if kept else "", "Reports", {sid: r.id for b in batches for sid, r in b.reports}
    )
    for state in _ordered(selection.states.values()):
        recorder.add_item(
            TraceItem(
                source="report",
                id=state.report.id,
                tokens=state.tokens,
                status="included" if state.status == "included" else "dropped",
                reason=state.reason,
                rank=state.short_id,
                hop=selection.mode,
                score=max((p.score for p in points if state.report.id in p.report_ids), default=None),
            )
        )
    recorder.timings.update(
        select=selected_at - started, map=mapped_at - selected_at, total=time.perf_counter() - started
    )
    recorder.extra.update(
        map={
            "budget": map_budget.to_dict(),
            "batches": len(batches),
            "calls": sum(b.calls for b in batches),
            "repaired": sum(int(b.repaired) for b in batches),
            "malformed": sum(int(b.malformed) for b in batches),
            "skipped_points": sum(b.skipped_points for b in batches),
            "failed": sum(int(b.status == "failed") for b in batches),
            "skipped": sum(int(b.status == "skipped") for b in batches),
            "points": len(points),
            "usable": outcome.done,
            "outcome": outcome.name,
        },
        call_budget=gate.to_dict(),
        selection=selection.to_dict(),
        reports=[s.to_dict() for s in _ordered(selection.states.values())],
        batches=[b.to_dict() for b in batches],
        points=point_trace,
    )
    params = {
        **settings.model_dump(),
        "level": level,
        "dynamic": dynamic,
        "budget": budget,
        "seed": seed,
        "request": request.model_dump(mode="json"),
    }
    if error is not None:
        recorder.extra["error"] = error_info(error)
    ending = Ending(answer, context, stop_reason, params, seed=seed, error=error, check=check)
    return finish(
        rt,
        request,
        recorder,
        ending,
        GlobalResult,
        level=level,
        dynamic=dynamic,
        seed=seed,
        selection=selection,
        batches=batches,
    )


def _budgets(
    rt: Runtime, settings: GlobalConfig, question: str, budget: int | None
) -> tuple[BudgetBreakdown, BudgetBreakdown]:
    window = rt.config.llm.model_context_window
    q = rt.count_tokens(question)
    map_b = derive_budget(
        Demand(
            window=window,
            answer_reserve=settings.map_max_tokens,
            prompt=rt.count_tokens(map_prompt(rt, settings, "")),
            question=q,
            history=0,
            cap=settings.map_cap,
        ),
        budget,
    )
    reduce_b = derive_budget(
        Demand(
            window=window,
            answer_reserve=settings.answer_reserve,
            prompt=rt.count_tokens(_reduce_prompt(rt, settings, "")),
            question=q,
            history=0,
            cap=settings.reduce_cap,
        ),
        budget,
    )
    return map_b, reduce_b


def _reduce_prompt(rt: Runtime, settings: GlobalConfig, points_text: str) -> str:
    return render_prompt("global_reduce", rt.config.prompts, points=points_text, response_type=settings.response_type)


def _reduce_context(
    rt: Runtime, settings: GlobalConfig, points: list[Point], budget: int
) -> tuple[list[Point], list[dict[str, Any]], ContextInfo]:
    """Drop low scores, then fill best-first item by item; the rendered text is re-counted exactly."""
    ranked = sorted(points, key=lambda p: (-p.score, p.batch, p.index))
    trace: dict[str, dict[str, Any]] = {}
    candidates: list[Candidate] = []
    sep = rt.count_tokens("\n\n")
    for rank, point in enumerate(ranked, 1):
        block = render_point(point)
        tokens = rt.count_tokens(block) + sep
        trace[point.key] = {
            "point": point.key,
            "rank": rank,
            "score": point.score,
            "tokens": tokens,
            "reports": point.report_ids,
            "cited": point.cited,
        }
        if point.score < settings.min_score:
            trace[point.key].update(status="dropped", reason="zero_score" if point.score == 0 else "low_score")
            continue
        candidates.append(Candidate("point", point.key, tokens, float(point.score), rank, payload=point))
    result = fill({"point": candidates}, ["point"], {}, budget)
    kept = [c.payload for c in result.included]
    for cand, reason in result.dropped:
        trace[cand.id].update(status="dropped", reason=reason)
    text = "\n\n".join(render_point(p) for p in kept)
    tokens = rt.count_tokens(text) if text else 0
    while kept and tokens > budget:  # cannot happen with the separator counted, but never send over budget
        gone = kept.pop()
        trace[gone.key].update(status="dropped", reason="budget")
        text = "\n\n".join(render_point(p) for p in kept)
        tokens = rt.count_tokens(text) if text else 0
    for p in kept:
        trace[p.key].update(status="included", reason=None)
    ordered = sorted(trace.values(), key=lambda t: t["rank"])
    return kept, ordered, ContextInfo(text, tokens, budget)


def _reduce_messages(rt: Runtime, settings: GlobalConfig, points_text: str, question: str) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": _reduce_prompt(rt, settings, points_text)},
        {"role": "user", "content": question},
    ]


def _answer(
    rt: Runtime,
    settings: GlobalConfig,
    messages: list[dict[str, str]] | None,
    on_token: TokenSink | None,
    gate: CallGate,
) -> tuple[str | None, str, AnswerCheck | None]:
    """The reduce (``messages``; None: no point was kept), inside the held-back reservation, checked and retried
    once if it is no answer (the retry needs a call of the budget); ``budget`` when the map met the cap
    (answered anyway)."""
    if messages is None:
        answer = render_prompt("no_data_answer", rt.config.prompts).strip()
        if on_token is not None:
            on_token(answer)
        return answer, "budget" if gate.fired else "no_relevant_points", None
    chat = rt.chat()

    def ask(msgs: list[dict[str, str]], max_tokens: int, sink: TokenSink | None) -> Reply:
        res = gate.reserve(msgs)  # OverBudget: no call
        try:
            reply = chat.complete(msgs, phase="reduce", max_tokens=max_tokens, on_token=sink)
        except Exception as err:
            gate.settle(res, None, err)
            raise
        gate.settle(res, reply.prompt_tokens)
        return reply

    try:
        check = checked_chat_answer(rt, chat, "reduce", messages, settings.answer_reserve, on_token, ask)
    except OverBudget:
        return None, "budget", None
    return check.answer, "budget" if gate.fired else "answered", check


def _finish_states(
    selection: Selection, batches: list[MapBatch], points: list[Point], kept: list[Point], min_score: int
) -> None:
    """The verdict per mapped report: used if an included point is credited to it, else why not."""
    kept_keys = {p.key for p in kept}
    malformed = {r.id for b in batches if b.malformed for _, r in b.reports}
    unmapped = {r.id: b.status for b in batches if b.status in ("failed", "skipped") for _, r in b.reports}
    for state in selection.states.values():
        if state.stage != "mapped":
            if state.status is None:
                state.drop("not_selected")
            continue
        mine = [p for p in points if state.report.id in p.report_ids]
        state.points = len(mine)
        state.used_points = sum(1 for p in mine if p.key in kept_keys)
        if state.used_points:
            state.stage, state.status, state.reason = "used", "included", None
        elif state.report.id in unmapped:
            state.drop("map_failed" if unmapped[state.report.id] == "failed" else "budget")
        elif state.report.id in malformed:
            state.drop("map_malformed")
        elif not mine:
            state.drop("no_points")
        elif any(p.score >= min_score for p in mine):
            state.drop("points_over_budget")
        elif all(p.score == 0 for p in mine):
            state.drop("zero_score")
        else:
            state.drop("low_score")


def _ordered(states: Any) -> list[ReportState]:
    """Used reports by short id first, then the rest by stage reached and id (stable for diffs)."""
    stage_order = {"used": 0, "mapped": 1, "rated": 2, "listed": 3}
    return sorted(
        states,
        key=lambda s: (stage_order.get(s.stage, 9), s.short_id if s.short_id is not None else 10**9, s.report.id),
    )
