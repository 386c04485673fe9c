"""Local search (docs: concepts/modes): rewrite -> budget -> entry -> expansion -> bridge/walk -> rank -> route ->
fill -> answer.

Two entry points, both taking a ``Runtime``:

* ``build_local_context(rt, LocalAsk, settings) -> LocalContext``: retrieval and assembly only, no chat call
  unless a rewrite or the LLM router is needed. Benchmarks and DRIFT's steps (with DRIFT's own ``drift.local``
  settings) call this.
* ``local_search(rt, LocalQuery) -> LocalResult``: the context plus the answer and the citation check, ended
  through ``query/finish.py`` (trace stored, result built).

``build_local_context`` reads top to bottom: each stage is a function of the ``LocalRun`` (``run.py``) that
returns a new typed value. Retrieval costs two Bolt round trips (entry, expansion) plus one per hop past the
second (the bridge, ``local.max_hops``, default 3) and one with ``ppr.fetch``; the default ``ranking: ppr``
walks everything they found. A stored question adds the trace write (and, on an Engine's first question, the
schema check): the trace's ``round_trips`` counts every statement.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from driftgraph.errors import QuestionError
from driftgraph.prompts import render_prompt
from driftgraph.query import tables
from driftgraph.query.answer import AnswerCheck, checked_chat_answer
from driftgraph.query.budget import BudgetBreakdown, Candidate, Demand, derive_budget
from driftgraph.query.citations import check_local
from driftgraph.query.finish import Ending, finish
from driftgraph.query.history import validate_history
from driftgraph.query.local.assemble import assemble
from driftgraph.query.local.entry import EntryResult
from driftgraph.query.local.neighbourhood import Neighbourhood
from driftgraph.query.local.rank import Ranked
from driftgraph.query.local.retrieve import choose_route, fuse_original, rank, rerank, retrieve
from driftgraph.query.local.run import LocalRun
from driftgraph.query.requests import LocalQuery, check_question
from driftgraph.query.result import ContextInfo, LocalResult
from driftgraph.query.rewrite import Rewrite, history_text, rewrite_question
from driftgraph.query.route import Route
from driftgraph.query.trace import SOURCES, Trace

if TYPE_CHECKING:
    from driftgraph.config import LocalConfig
    from driftgraph.runtime import Runtime

MESSAGE_OVERHEAD = 7  # chat-format tokens of a system + a user message
NO_HISTORY = "(none)"


@dataclass(frozen=True)
class LocalAsk:
    """One context to build: the question, and optionally a fixed budget (benchmarks), history turns
    (``{role, content}``), entity titles or ids that must never enter, and the query's vector (skips embedding)."""

    question: str
    budget: int | None = None
    history: Sequence[Mapping[str, str]] | None = None
    exclude: Sequence[str] = ()
    query_vector: Any = None


@dataclass(frozen=True)
class LocalState:
    """What the stages found, kept for inspection (benchmarks, diagnostics): the entry verdicts with seed chunks
    and report ids, the neighbourhood (expansion, bridge, walk), every source ranked, and the route."""

    entry: EntryResult
    found: Neighbourhood
    ranked: Ranked
    route: Route


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
    state: LocalState | None = None

    @property
    def chunk_ids(self) -> list[str]:
        """Ids of the included text units, in context order (what evidence recall is measured on)."""
        return [c.id for c in self.included if c.source == "chunk"]


def build_local_context(rt: Runtime, ask: LocalAsk, settings: LocalConfig) -> LocalContext:
    """Retrieve and assemble a context for the question within the budget; records the trace."""
    question = check_question(ask.question)
    rec = Trace(mode="local", question=question)
    rec.rewrite, hist = _standalone(rt, question, settings, ask.history)
    query = rec.rewrite.query if rec.rewrite else question
    rec.budget = breakdown = _derive_budget(rt, settings, query, hist, ask.budget)
    t0 = time.perf_counter()
    vector = ask.query_vector if ask.query_vector is not None else rt.embed([query], phase="embed")[0]
    run = LocalRun(rt, settings, question, query, vector, tuple(ask.exclude), rec)
    t1 = time.perf_counter()
    entry, found = retrieve(run)  # round trips 1, 2, 3..
    t2 = time.perf_counter()
    ranked = rank(run, entry, found)
    ranked = fuse_original(run, ranked)  # multi-turn: both questions' chunks
    ranked = rerank(run, ranked)  # optional: local.rerank.provider
    rec.absent_sources = [s for s in SOURCES if not entry.present.get(s, False)]
    rec.route = route = choose_route(run, entry)
    filled = assemble(run, entry, ranked, route, breakdown.context)
    t3 = time.perf_counter()
    rec.timings.update(embed_s=t1 - t0, assemble_s=t3 - t2, retrieval_assembly_s=t3 - t1)
    return LocalContext(
        question=question,
        query=query,
        text=filled.text,
        tokens=filled.tokens,
        budget=breakdown,
        recorder=rec,
        included=list(filled.result.included),
        id_map=tables.id_map(filled.result.included),
        history_text=hist,
        state=LocalState(entry, found, ranked, route),
    )


def _standalone(
    rt: Runtime, question: str, settings: LocalConfig, history: Sequence[Mapping[str, str]] | None
) -> tuple[Rewrite | None, str]:
    """The rewrite (only when history is given: None without) and the history text."""
    count = rt.count_tokens
    turns = validate_history([dict(t) for t in history]) if history else []
    hist = history_text(turns, settings, count, question) if turns else ""
    # the question alone must fit before anything is spent on it
    window = rt.config.llm.model_context_window
    if count(question) + settings.answer_reserve > window:
        raise QuestionError(
            f"the question ({count(question)} tokens) does not fit the model window ({window} tokens, "
            f"llm.model_context_window) with the answer reserve ({settings.answer_reserve})"
        )
    rw = rewrite_question(question, hist, rt.chat, lambda name, **v: render_prompt(name, rt.config.prompts, **v))
    return (rw if turns else None), hist


def _derive_budget(rt: Runtime, settings: LocalConfig, query: str, hist: str, budget: int | None) -> BudgetBreakdown:
    """The context budget from the deployment: window - answer reserve - prompt - question - history."""
    count = rt.count_tokens
    # without history the answer prompt says "(none)" there; with history its tokens are the history term
    system = render_prompt(
        "local_search",
        rt.config.prompts,
        context_data="",
        history="" if hist else NO_HISTORY,
        response_type=settings.response_type,
    )
    return derive_budget(
        Demand(
            window=rt.config.llm.model_context_window,
            answer_reserve=settings.answer_reserve,
            prompt=count(system) + MESSAGE_OVERHEAD,
            question=count(query),
            history=count(hist),
            cap=settings.context_cap,
        ),
        budget,
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
    ask = LocalAsk(request.question, budget=request.budget, history=history, exclude=request.exclude)
    ctx = build_local_context(rt, ask, settings)
    check = None if request.context_only else _answer(rt, ctx, settings, on_token)
    answer = check.answer if check is not None else None
    stop = "context_only" if request.context_only else ("no_data" if not ctx.included else "answered")
    params = {
        **settings.model_dump(mode="json"),
        "budget": request.budget,
        "route": request.route,
        "exclude": list(request.exclude),
        "context_only": request.context_only,
        "history_turns_given": len(history),
        "request": request.model_dump(mode="json"),
    }
    context = ContextInfo(ctx.text, ctx.tokens, ctx.budget.context)
    ending = Ending(answer, context, stop, params, parent_id=parent_id, check=check)
    return finish(rt, request, ctx.recorder, ending, LocalResult)


def _answer(
    rt: Runtime, ctx: LocalContext, settings: LocalConfig, on_token: Callable[[str], None] | None
) -> AnswerCheck:
    """The answer call, checked and retried once if it is no answer (``query/answer.py``; skipped when nothing
    entered the context), its citations checked against the context."""
    rec = ctx.recorder
    if not ctx.included:
        rec.notes.append("no context: the answer call was skipped")
        return AnswerCheck(answer=render_prompt("no_data_answer", rt.config.prompts).strip())
    t0 = time.perf_counter()
    system = render_prompt(
        "local_search",
        rt.config.prompts,
        context_data=ctx.text,
        history=ctx.history_text or NO_HISTORY,
        response_type=settings.response_type,
    )
    messages = [{"role": "system", "content": system}, {"role": "user", "content": ctx.query}]
    check = checked_chat_answer(rt, rt.chat(), "answer", messages, settings.answer_reserve, on_token)
    rec.citations = check_local(check.answer or "", ctx.id_map, {i.id: i.location for i in rec.included("chunk")})
    rec.timings["answer_s"] = time.perf_counter() - t0
    return check
