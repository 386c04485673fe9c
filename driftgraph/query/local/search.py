"""Local search (DESIGN §4): rewrite -> budget -> entry -> expansion -> route -> fill -> render -> answer.

Two entry points, both taking a ``QueryDeps`` (see ``deps.py``) and a ``LocalConfig`` (the ``local``
config section, or DRIFT's own copy of it):

* ``build_local_context(...) -> LocalContext``: retrieval and assembly only, no chat call unless a rewrite
  or the LLM router is needed. Benchmarks and DRIFT's steps call this.
* ``local_search(...) -> SearchResult``: the context plus the answer, the citation check and the stored
  trace; the ``SearchResult`` is the shared JSON envelope.

Retrieval costs at most two Bolt round trips (entry, expansion); the trace write is one more.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from driftgraph.errors import QuestionError
from driftgraph.query.budget import BudgetBreakdown, Candidate, derive_budget, fill
from driftgraph.query.local import render
from driftgraph.query.trace import EntryCandidate, TraceItem, TraceRecorder

if TYPE_CHECKING:
    import numpy as np

    from driftgraph.config import LocalConfig
    from driftgraph.query.result import SearchResult
    from driftgraph.runtime import QueryDeps

SOURCES = ("report", "entity", "relationship", "chunk", "claim")
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
    recorder: TraceRecorder
    included: list[Candidate] = field(default_factory=list)
    id_map: dict[str, dict[int, str]] = field(default_factory=dict)
    history_text: str = ""

    @property
    def chunk_ids(self) -> list[str]:
        """Ids of the included text units, in context order (what evidence recall is measured on)."""
        return [c.id for c in self.included if c.source == "chunk"]


def build_local_context(
    deps: QueryDeps,
    question: str,
    settings: LocalConfig,
    *,
    budget: int | None = None,
    history: Sequence[dict[str, str]] | None = None,
    exclude: Sequence[str] = (),
    route: str | None = None,
    query_vector: np.ndarray | None = None,
) -> LocalContext:
    """Retrieve and assemble a context for ``question`` within the budget; records the trace.

    ``budget`` fixes the context size (benchmarks); otherwise it is derived from the deployment.
    ``history`` is a list of ``{role, content}`` turns; ``exclude`` entity titles or ids never enter;
    ``route`` overrides ``settings.route``; ``query_vector`` skips embedding the (standalone) question.
    """
    from driftgraph.prompts import render_prompt
    from driftgraph.query.history import validate_history
    from driftgraph.query.local.entry import run_entry
    from driftgraph.query.local.expand import expansion_params, run_expansion
    from driftgraph.query.local.rank import rank_all
    from driftgraph.query.local.rewrite import history_text, rewrite_question
    from driftgraph.query.local.route import route as choose_route
    from driftgraph.query.local.route import thematic_wording

    question = (question or "").strip()
    if not question:
        raise QuestionError("the question is empty")
    cfg = deps.config
    count = deps.count_tokens
    rec = TraceRecorder(mode="local", question=question)

    def prompt(name: str, **values: object) -> str:
        return render_prompt(name, cfg.prompts, **values)

    # 1. rewrite (multi-turn only)
    turns = validate_history(list(history)) if history else []
    hist = history_text(turns, settings, count) if turns else ""
    # the question alone must fit before anything is spent on it
    window = cfg.llm.model_context_window
    if count(question) + settings.answer_reserve > window:
        raise QuestionError(
            f"the question ({count(question)} tokens) does not fit the model window ({window} tokens, "
            f"llm.model_context_window) with the answer reserve ({settings.answer_reserve})"
        )
    rw = rewrite_question(question, hist, deps.chat, prompt)
    rec.rewrite = rw.to_dict() if turns else None
    query = rw.query

    # 2. budget from the deployment
    # without history the answer prompt says "(none)" there; with history its tokens are the history term
    system = prompt("local_search", context_data="", history="" if hist else NO_HISTORY)
    breakdown = derive_budget(
        window=window,
        answer_reserve=settings.answer_reserve,
        prompt=count(system) + MESSAGE_OVERHEAD,
        question=count(query),
        history=count(hist),
        cap=settings.context_cap,
        override=budget,
    )
    rec.budget = breakdown.to_dict()

    # 3. entry (round trip 1)
    t0 = time.perf_counter()
    vector = query_vector if query_vector is not None else deps.embed([query], phase="embed")[0]
    t1 = time.perf_counter()
    entry = run_entry(deps.store, settings, vector, query, exclude)
    thematic = thematic_wording(query)
    entry.strict = entry.off_topic and not thematic
    gate = settings.min_similarity if entry.strict else settings.chunk_min_similarity
    # A thematic question names no one thing: its nearest reports enter whatever their cosine.
    report_gate = -1.0 if thematic else gate
    for cand in entry.candidates:
        rec.add_entry(cand)
    for kind, hits, floor in (("chunk", entry.chunk_hits, gate), ("report", entry.report_hits, report_gate)):
        for hit in hits:
            ok = hit.similarity >= floor
            reason = None if ok else ("off_topic" if entry.strict else "below_threshold")
            rec.add_entry(
                EntryCandidate(
                    hit.id,
                    "",
                    round(hit.similarity, 4),
                    "kept" if ok else "dropped",
                    reason,
                    kind=kind,
                    similarity=hit.similarity,
                    vector_rank=hit.rank,
                )
            )
    seeds = [h.id for h in entry.chunk_hits if h.similarity >= gate][: settings.seed_chunks]
    report_ids = [h.id for h in entry.report_hits if h.similarity >= report_gate]
    t2 = time.perf_counter()

    # 4. expansion (round trip 2)
    params = expansion_params(
        settings,
        vector,
        [e.id for e in entry.entities],
        seeds,
        [h.id for h in entry.chunk_hits],
        report_ids,
        exclude,
        entry.excluded_ids,
    )
    expansion, expand_trips = run_expansion(deps.store, params)
    # counted here, not from the store's shared counter: DRIFT runs several of these at once
    rec.round_trips = 1 + expand_trips
    t3 = time.perf_counter()

    # 5. rank, route, fill
    ranked = rank_all(expansion, entry, settings, deps.count_many)
    present = entry.present
    rec.absent_sources = [s for s in SOURCES if not present.get(s, False)]
    chosen = choose_route(
        query,
        entry.entities,
        settings,
        route,
        deps.chat() if settings.llm_router else None,
        lambda q, ents: prompt("route_question", question=q, entities=", ".join(e.title for e in ents[:10]) or "none"),
    )
    rec.route = chosen.to_dict()
    note = _note(entry, settings, ranked.candidates)
    note_tokens = count(note) if note else 0
    if note_tokens > breakdown.context:
        note, note_tokens = "", 0  # a budget too small even for the note stays empty
    headers = {s: count(render.header(s)) for s in SOURCES}
    result = fill(ranked.candidates, chosen.order, chosen.floors, max(0, breakdown.context - note_tokens), headers)
    text = note + render.render(result.included, chosen.order)
    tokens = count(text)
    while tokens > breakdown.context and result.included:  # safety net; the parts add up exactly in practice
        last = result.included.pop()
        result.dropped.append((last, "exact_check"))
        text = note + render.render(result.included, chosen.order)
        tokens = count(text)
    t4 = time.perf_counter()

    for c in result.included:
        via = (c.payload or {}).get("via")
        rec.add_item(TraceItem(c.source, c.id, c.tokens, "included", None, c.rank, c.hop, round(c.score, 4), via))
    for c, reason in [*ranked.dropped, *result.dropped]:
        rec.add_item(TraceItem(c.source, c.id, c.tokens, "dropped", reason, c.rank or None, c.hop, round(c.score, 4)))
    if note:
        rec.notes.append(note.strip())
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


def _note(entry: Any, settings: LocalConfig, candidates: dict[str, list[Candidate]]) -> str:
    """What the context says when the index has nothing close to the question (instead of padding)."""
    if any(candidates.values()) and not entry.off_topic:
        return ""
    best_e = f"{entry.best_entity:.2f}" if entry.best_entity is not None else "none"
    best_c = f"{entry.best_chunk:.2f}" if entry.best_chunk is not None else "none"
    return (
        f"-----Note-----\nNo entity in the index is similar enough to the question (best entity similarity {best_e},"
        f" threshold {settings.min_similarity:g}; best text unit {best_c}). The tables below hold only what passed"
        " the threshold, if anything.\n"
    )


def local_search(
    deps: QueryDeps,
    question: str,
    settings: LocalConfig,
    *,
    budget: int | None = None,
    history: Sequence[dict[str, str]] | None = None,
    exclude: Sequence[str] = (),
    route: str | None = None,
    context_only: bool = False,
    on_token: Callable[[str], None] | None = None,
    write_trace: bool = True,
    parent_id: str | None = None,
    params: dict[str, Any] | None = None,
) -> SearchResult:
    """Answer ``question`` (or, with ``context_only``, only assemble the context) and store the trace."""
    from driftgraph.prompts import render_prompt
    from driftgraph.query.result import ContextInfo, SearchResult, cost_dict
    from driftgraph.query.trace import write_trace as store_trace

    ctx = build_local_context(deps, question, settings, budget=budget, history=history, exclude=exclude, route=route)
    rec = ctx.recorder
    answer: str | None = None
    if not context_only:
        if not ctx.included:
            answer = render_prompt("no_data_answer", deps.config.prompts).strip()
            rec.notes.append("no context: the answer call was skipped")
        else:
            t0 = time.perf_counter()
            system = render_prompt(
                "local_search", deps.config.prompts, context_data=ctx.text, history=ctx.history_text or NO_HISTORY
            )
            res = deps.chat().complete(
                [{"role": "system", "content": system}, {"role": "user", "content": ctx.query}],
                phase="answer",
                max_tokens=settings.answer_reserve,
                on_token=on_token,
            )
            answer = res.text
            rec.citations = render.check_citations(answer, ctx.id_map)
            rec.timings["answer_s"] = time.perf_counter() - t0
    cost = cost_dict(deps.ledger.to_dict(), deps.ledger.to_dict(per_phase=True))
    run_params = {
        **settings.model_dump(mode="json"),
        "budget": budget,
        "route": route,
        "exclude": list(exclude),
        "context_only": context_only,
        "history_turns_given": len(history or []),
        **(params or {}),
    }
    rid = None
    if write_trace:
        rid = store_trace(
            deps.store,
            rec,
            deps.config.trace,
            query=question,
            params=run_params,
            cost=cost,
            stop_reason="context_only" if context_only else ("no_data" if not ctx.included else "answered"),
            context_tokens=ctx.tokens,
            parent_id=parent_id,
        )
    return SearchResult(
        mode="local",
        question=question,
        answer=answer,
        retrieval_id=rid,
        context=ContextInfo(ctx.text, ctx.tokens, ctx.budget.context),
        trace=rec.to_dict(),
        cost=cost,
    )
