"""Local search (README "Local search"): rewrite -> budget -> entry -> expansion -> route -> fill -> answer.

Two entry points, both taking a ``Runtime``:

* ``build_local_context(rt, question, settings, ...) -> LocalContext``: retrieval and assembly only, no chat
  call unless a rewrite or the LLM router is needed. Benchmarks and DRIFT's steps (with DRIFT's own
  ``drift.local`` settings) call this.
* ``local_search(rt, LocalQuery) -> LocalResult``: the context plus the answer, the citation check and the
  stored trace.

The stages live in ``retrieve`` (entry, expansion, hops, fusion, rerank, route) and ``assemble`` (the fill);
ranking is ``rank``'s. Retrieval costs two Bolt round trips (entry, expansion) plus one per hop past the
second (the bridge, ``local.max_hops``, default 3) and one with ``ppr.fetch`` (the neighbourhood of the best
candidates); the default ``ranking: ppr`` walks everything they found. The trace write is one more.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from driftgraph.errors import QuestionError
from driftgraph.prompts import render_prompt
from driftgraph.query.budget import BudgetBreakdown, Candidate, derive_budget
from driftgraph.query.citations import check_local
from driftgraph.query.history import validate_history
from driftgraph.query.local import render, retrieve
from driftgraph.query.local.assemble import assemble, record_items
from driftgraph.query.local.rank import rank_all
from driftgraph.query.local.rewrite import history_text, rewrite_question
from driftgraph.query.requests import LocalQuery, check_question
from driftgraph.query.result import ContextInfo, Cost, LocalResult
from driftgraph.query.trace import SOURCES, Trace, write_trace

if TYPE_CHECKING:
    import numpy as np

    from driftgraph.config import LocalConfig
    from driftgraph.runtime import Runtime

MESSAGE_OVERHEAD = 7  # chat-format tokens of a system + a user message
NO_HISTORY = "(none)"


@dataclass
class LocalContext:
    """An assembled local-search context and everything needed to answer from it and explain it."""

    question: str
    query: str
    text: str
    tokens: int
    budget: BudgetBreakdown
    recorder: Trace
    included: list[Candidate] = field(default_factory=list)
    id_map: dict[str, dict[int, str]] = field(default_factory=dict)
    history_text: str = ""

    @property
    def chunk_ids(self) -> list[str]:
        """Ids of the included text units, in context order (what evidence recall is measured on)."""
        return [c.id for c in self.included if c.source == "chunk"]


def build_local_context(
    rt: Runtime,
    question: str,
    settings: LocalConfig,
    *,
    budget: int | None = None,
    history: Sequence[dict[str, str]] | None = None,
    exclude: Sequence[str] = (),
    query_vector: np.ndarray | None = None,
) -> LocalContext:
    """Retrieve and assemble a context for ``question`` within the budget; records the trace.

    ``budget`` fixes the context size (benchmarks); otherwise it is derived from the deployment.
    ``history`` is a list of ``{role, content}`` turns; ``exclude`` entity titles or ids never enter;
    ``query_vector`` skips embedding the (standalone) question.
    """
    question = check_question(question)
    rec = Trace(mode="local", question=question)
    query, hist = _standalone_query(rt, question, settings, history, rec)
    breakdown = _derive_budget(rt, settings, query, hist, budget)
    rec.budget = breakdown
    t0 = time.perf_counter()
    vector = query_vector if query_vector is not None else rt.embed([query], phase="embed")[0]
    t1 = time.perf_counter()
    entry, seeds, report_ids = retrieve.entry_points(rt, settings, vector, query, exclude, rec)  # round trip 1
    t2 = time.perf_counter()
    expansion = retrieve.expand(rt, settings, vector, entry, seeds, report_ids, exclude, rec)  # round trip 2
    retrieve.bridge(rt, settings, vector, entry, expansion, seeds, exclude, rec)  # round trips 3.. (hops past 2)
    t3 = time.perf_counter()
    ranked = rank_all(expansion, entry, settings, rt.count_many)
    retrieve.fuse_original(rt, settings, question, query, exclude, ranked, rec)  # multi-turn: both questions' chunks
    retrieve.rerank(rt, settings, query, ranked.candidates, rec)  # optional: local.rerank.provider
    rec.absent_sources = [s for s in SOURCES if not entry.present.get(s, False)]
    rec.route = chosen = retrieve.route(rt, settings, query, entry)
    text, tokens, result = assemble(rt, settings, entry, ranked.candidates, chosen, breakdown.context, rec)
    t4 = time.perf_counter()
    record_items(rec, result.included, [*ranked.dropped, *result.dropped])
    rec.timings.update(
        {
            "embed_s": t1 - t0,
            "entry_s": t2 - t1,
            "expand_s": t3 - t2,
            "assemble_s": t4 - t3,
            "retrieval_assembly_s": t4 - t1,
        }
    )
    return LocalContext(
        question=question,
        query=query,
        text=text,
        tokens=tokens,
        budget=breakdown,
        recorder=rec,
        included=list(result.included),
        id_map=render.id_map(result.included),
        history_text=hist,
    )


def _standalone_query(
    rt: Runtime, question: str, settings: LocalConfig, history: Sequence[dict[str, str]] | None, rec: Trace
) -> tuple[str, str]:
    """The question as a standalone query (rewritten only when history is given) and the history text."""
    count = rt.count_tokens
    turns = validate_history(list(history)) if history else []
    hist = history_text(turns, settings, count, question) if turns else ""
    # the question alone must fit before anything is spent on it
    window = rt.config.llm.model_context_window
    if count(question) + settings.answer_reserve > window:
        raise QuestionError(
            f"the question ({count(question)} tokens) does not fit the model window ({window} tokens, "
            f"llm.model_context_window) with the answer reserve ({settings.answer_reserve})"
        )
    rw = rewrite_question(question, hist, rt.chat, lambda name, **v: retrieve.prompt(rt, name, **v))
    rec.rewrite = rw if turns else None
    return rw.query, hist


def _derive_budget(rt: Runtime, settings: LocalConfig, query: str, hist: str, budget: int | None) -> BudgetBreakdown:
    """The context budget from the deployment: window - answer reserve - prompt - question - history."""
    count = rt.count_tokens
    # without history the answer prompt says "(none)" there; with history its tokens are the history term
    system = retrieve.prompt(rt, "local_search", context_data="", history="" if hist else NO_HISTORY)
    return derive_budget(
        window=rt.config.llm.model_context_window,
        answer_reserve=settings.answer_reserve,
        prompt=count(system) + MESSAGE_OVERHEAD,
        question=count(query),
        history=count(hist),
        cap=settings.context_cap,
        override=budget,
    )


def local_search(
    rt: Runtime,
    request: LocalQuery,
    *,
    on_token: Callable[[str], None] | None = None,
    parent_id: str | None = None,
) -> LocalResult:
    """Answer the request's question (or, with ``context_only``, only assemble the context); store the trace."""
    settings = request.settings(rt.config)
    history = [t.model_dump() for t in request.history]
    ctx = build_local_context(
        rt, request.question, settings, budget=request.budget, history=history, exclude=request.exclude
    )
    rec = ctx.recorder
    answer = None if request.context_only else _answer(rt, ctx, settings, on_token)
    cost = Cost.from_ledger(rt.ledger)
    stop = "context_only" if request.context_only else ("no_data" if not ctx.included else "answered")
    rid = None
    if request.store_trace:
        run_params = {
            **settings.model_dump(mode="json"),
            "budget": request.budget,
            "route": request.route,
            "exclude": list(request.exclude),
            "context_only": request.context_only,
            "history_turns_given": len(history),
            "request": request.model_dump(mode="json"),
        }
        rid = write_trace(
            rt.store,
            rec,
            rt.config.trace,
            query=request.question,
            params=run_params,
            cost=cost.to_dict(),
            stop_reason=stop,
            context_tokens=ctx.tokens,
            parent_id=parent_id,
        )
    return LocalResult(
        mode="local",
        question=request.question,
        answer=answer,
        retrieval_id=rid,
        context=ContextInfo(ctx.text, ctx.tokens, ctx.budget.context),
        trace=rec,
        cost=cost,
        stop_reason=stop,
    )


def _answer(rt: Runtime, ctx: LocalContext, settings: LocalConfig, on_token: Callable[[str], None] | None) -> str:
    """The answer call (skipped when nothing entered the context), its citations checked against the context."""
    rec = ctx.recorder
    if not ctx.included:
        rec.notes.append("no context: the answer call was skipped")
        return render_prompt("no_data_answer", rt.config.prompts).strip()
    t0 = time.perf_counter()
    system = render_prompt(
        "local_search", rt.config.prompts, context_data=ctx.text, history=ctx.history_text or NO_HISTORY
    )
    res = rt.chat().complete(
        [{"role": "system", "content": system}, {"role": "user", "content": ctx.query}],
        phase="answer",
        max_tokens=settings.answer_reserve,
        on_token=on_token,
    )
    rec.citations = check_local(res.text, ctx.id_map)
    rec.timings["answer_s"] = time.perf_counter() - t0
    return res.text
