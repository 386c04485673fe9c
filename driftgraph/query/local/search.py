"""Local search (README "Local search"): rewrite -> budget -> entry -> expansion -> route -> fill -> answer.

Two entry points, both taking a ``Runtime``:

* ``build_local_context(rt, question, settings, ...) -> LocalContext``: retrieval and assembly only, no chat
  call unless a rewrite or the LLM router is needed. Benchmarks and DRIFT's steps (with DRIFT's own
  ``drift.local`` settings) call this.
* ``local_search(rt, LocalQuery) -> LocalResult``: the context plus the answer, the citation check and the
  stored trace.

Retrieval costs two Bolt round trips (entry, expansion) plus one for the personalized PageRank neighbourhood
(``local.ranking: ppr``, the default) or, with ``ranking: score``, one per hop past the second
(``local.max_hops``, default 3); the trace write is one more.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from driftgraph.errors import QuestionError
from driftgraph.prompts import render_prompt
from driftgraph.query.budget import BudgetBreakdown, Candidate, FillResult, derive_budget, fill
from driftgraph.query.citations import check_local
from driftgraph.query.history import validate_history
from driftgraph.query.local import render
from driftgraph.query.local.entry import ChunkHit, EntryResult, run_entry
from driftgraph.query.local.expand import expansion_params, run_expansion
from driftgraph.query.local.multihop import run_bridge
from driftgraph.query.local.ppr import run_ppr
from driftgraph.query.local.rank import Ranked, rank_all, rrf_chunks
from driftgraph.query.local.rerank import renumber, rerank_chunks
from driftgraph.query.local.rewrite import history_text, rewrite_question
from driftgraph.query.local.route import Route, thematic_wording
from driftgraph.query.local.route import route as choose_route
from driftgraph.query.requests import LocalQuery, check_question
from driftgraph.query.result import ContextInfo, Cost, LocalResult
from driftgraph.query.trace import EntryCandidate, Trace, TraceItem, write_trace

if TYPE_CHECKING:
    import numpy as np

    from driftgraph.config import LocalConfig
    from driftgraph.runtime import Runtime

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
    entry, seeds, report_ids = _entry(rt, settings, vector, query, exclude, rec)  # round trip 1
    t2 = time.perf_counter()
    expansion = _expand(rt, settings, vector, entry, seeds, report_ids, exclude, rec)  # round trip 2
    _bridge(rt, settings, vector, entry, expansion, seeds, exclude, rec)  # round trips 3.. (hops past 2)
    t3 = time.perf_counter()
    ranked = rank_all(expansion, entry, settings, rt.count_many)
    _fuse_original(rt, settings, question, query, exclude, ranked, rec)  # multi-turn: both questions' chunks
    _rerank(rt, settings, query, ranked.candidates, rec)  # optional: local.rerank.provider
    rec.absent_sources = [s for s in SOURCES if not entry.present.get(s, False)]
    rec.route = chosen = _route(rt, settings, query, entry)
    text, tokens, result = _assemble(rt, settings, entry, ranked.candidates, chosen, breakdown.context, rec)
    t4 = time.perf_counter()
    _record_items(rec, result.included, [*ranked.dropped, *result.dropped])
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


def _prompt(rt: Runtime, name: str, **values: object) -> str:
    return render_prompt(name, rt.config.prompts, **values)


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
    rw = rewrite_question(question, hist, rt.chat, lambda name, **v: _prompt(rt, name, **v))
    rec.rewrite = rw if turns else None
    return rw.query, hist


def _derive_budget(rt: Runtime, settings: LocalConfig, query: str, hist: str, budget: int | None) -> BudgetBreakdown:
    """The context budget from the deployment: window - answer reserve - prompt - question - history."""
    count = rt.count_tokens
    # without history the answer prompt says "(none)" there; with history its tokens are the history term
    system = _prompt(rt, "local_search", context_data="", history="" if hist else NO_HISTORY)
    return derive_budget(
        window=rt.config.llm.model_context_window,
        answer_reserve=settings.answer_reserve,
        prompt=count(system) + MESSAGE_OVERHEAD,
        question=count(query),
        history=count(hist),
        cap=settings.context_cap,
        override=budget,
    )


def _entry(
    rt: Runtime, settings: LocalConfig, vector: Any, query: str, exclude: Sequence[str], rec: Trace
) -> tuple[EntryResult, list[str], list[str]]:
    """EntryResult entities, chunk and report hits with their verdicts; returns the seed chunks and report ids."""
    entry = run_entry(rt.store, settings, vector, query, exclude)
    thematic = thematic_wording(query)
    entry.strict = entry.off_topic and not thematic
    gate = settings.min_similarity if entry.strict else settings.chunk_min_similarity
    # A thematic question names no one thing: its nearest reports enter whatever their cosine.
    report_gate = -1.0 if thematic else gate
    for cand in entry.candidates:
        rec.add_entry(cand)
    gates: tuple[tuple[Literal["chunk", "report"], list[ChunkHit], float], ...] = (
        ("chunk", entry.chunk_hits, gate),
        ("report", entry.report_hits, report_gate),
    )
    for kind, hits, floor in gates:
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
    return entry, seeds, report_ids


def _expand(
    rt: Runtime,
    settings: LocalConfig,
    vector: Any,
    entry: EntryResult,
    seeds: list[str],
    report_ids: list[str],
    exclude: Sequence[str],
    rec: Trace,
) -> Any:
    """One expansion query around the entry points (second hop included)."""
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
    expansion, expand_trips = run_expansion(rt.store, params)
    # counted here, not from the store's shared counter: DRIFT runs several of these at once
    rec.round_trips = 1 + expand_trips
    return expansion


def _bridge(
    rt: Runtime,
    settings: LocalConfig,
    vector: Any,
    entry: EntryResult,
    expansion: dict[str, Any],
    seeds: list[str],
    exclude: Sequence[str],
    rec: Trace,
) -> None:
    """Hops past the second: the best chunks not yet hopped from seed the next hop (``multihop``), or with
    ``ranking: ppr`` one neighbourhood fetch and a personalized PageRank walk over it (``ppr``)."""
    exclude_ids = sorted({*entry.excluded_ids, *exclude})
    exclude_titles = sorted({e.lower() for e in exclude})
    if settings.ranking == "ppr":
        trips = run_ppr(rt.store, settings, vector, entry, expansion, seeds, exclude_ids, exclude_titles)
        walk = expansion["ppr"]
        rec.extra["ppr"] = {"nodes": walk.nodes, "edges": walk.edges, "iterations": walk.iterations}
    else:
        trips = run_bridge(rt.store, settings, vector, entry, expansion, seeds, exclude_ids, exclude_titles)
    rec.round_trips += trips


def _fuse_original(
    rt: Runtime,
    settings: LocalConfig,
    question: str,
    query: str,
    exclude: Sequence[str],
    ranked: Ranked,
    rec: Trace,
) -> None:
    """A rewritten question may lose what the user's own words found: retrieve for the original too and fuse
    the two chunk rankings by reciprocal rank (RRF, ``rrf_k``). Only when a rewrite changed the question."""
    if query == question:
        return
    side = Trace(mode="local", question=question)  # the original's entry verdicts stay out of the trace
    vector = rt.embed([question], phase="embed")[0]
    entry, seeds, report_ids = _entry(rt, settings, vector, question, exclude, side)
    expansion = _expand(rt, settings, vector, entry, seeds, report_ids, exclude, side)
    _bridge(rt, settings, vector, entry, expansion, seeds, exclude, side)
    original = rank_all(expansion, entry, settings, rt.count_many)
    rewritten = ranked.candidates.get("chunk", [])
    fused = rrf_chunks([rewritten, original.candidates.get("chunk", [])], settings.rrf_k)
    ranked.candidates["chunk"] = renumber(fused, rt.count_many)
    rec.round_trips += side.round_trips
    rec.extra["fusion"] = {
        "queries": [query, question],
        "chunks": [len(rewritten), len(original.candidates.get("chunk", []))],
        "fused": len(fused),
    }
    rec.notes.append("chunks of the rewritten and the original question fused by reciprocal rank")


def _rerank(
    rt: Runtime, settings: LocalConfig, query: str, candidates: dict[str, list[Candidate]], rec: Trace
) -> None:
    """The configured reranker reorders the best chunk candidates (no call with provider ``none``)."""
    cfg = settings.rerank
    if cfg.provider == "none" or not candidates.get("chunk"):
        return
    t0 = time.perf_counter()
    from driftgraph.llm.tokenizer import truncate_tokens

    encoding = rt.config.tokenizer.encoding
    chunks = rerank_chunks(
        candidates["chunk"],
        query,
        cfg,
        lambda text, n: truncate_tokens(text, n, encoding),
        rt.chat,
        lambda name, **v: _prompt(rt, name, **v),
    )
    candidates["chunk"] = renumber(chunks, rt.count_many)
    rec.timings["rerank_s"] = time.perf_counter() - t0
    rec.notes.append(f"chunks reranked by {cfg.provider} (top {min(cfg.top_n, len(chunks))} of {len(chunks)})")


def _route(rt: Runtime, settings: LocalConfig, query: str, entry: EntryResult) -> Route:
    """The question's shape: which sources go first and which floors hold."""
    return choose_route(
        query,
        entry.entities,
        settings,
        None,
        rt.chat() if settings.llm_router else None,
        lambda q, ents: _prompt(
            rt, "route_question", question=q, entities=", ".join(e.title for e in ents[:10]) or "none"
        ),
    )


def _assemble(
    rt: Runtime,
    settings: LocalConfig,
    entry: EntryResult,
    candidates: dict[str, list[Candidate]],
    chosen: Route,
    budget: int,
    rec: Trace,
) -> tuple[str, int, FillResult]:
    """Fill item by item in the route's order and render; the exact token count never exceeds ``budget``."""
    count = rt.count_tokens
    note = _note(entry, settings, candidates)
    note_tokens = count(note) if note else 0
    if note_tokens > budget:
        note, note_tokens = "", 0  # a budget too small even for the note stays empty
    headers = {s: count(render.header(s)) for s in SOURCES}
    room = max(0, budget - note_tokens)
    caps = {s: int(share * room) for s, share in chosen.caps.items()}
    result = fill(candidates, chosen.order, chosen.floors, room, headers, caps)
    short = [c for c in result.included if c.form]
    if short:
        rec.notes.append(f"{len(short)} report(s) entered as their summary: the full text did not fit what was left")
    text = note + render.render(result.included, chosen.order)
    tokens = count(text)
    while tokens > budget and result.included:  # safety net; the parts add up exactly in practice
        last = result.included.pop()
        result.dropped.append((last, "exact_check"))
        text = note + render.render(result.included, chosen.order)
        tokens = count(text)
    if note:
        rec.notes.append(note.strip())
    return text, tokens, result


def _record_items(rec: Trace, included: list[Candidate], dropped: list[tuple[Candidate, str]]) -> None:
    for c in included:
        p = c.payload or {}
        rec.add_item(
            TraceItem(
                c.source, c.id, c.tokens, "included", None, c.rank, c.hop, round(c.score, 4), p.get("via"),
                depth=p.get("depth"), rerank_score=p.get("rerank_score"), form=c.form, why=c.why,
            )
        )
    for c, reason in dropped:
        p = c.payload or {}
        rec.add_item(
            TraceItem(
                c.source, c.id, c.tokens, "dropped", reason, c.rank or None, c.hop, round(c.score, 4), p.get("via"),
                depth=p.get("depth"), rerank_score=p.get("rerank_score"),
            )
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
    rt: Runtime,
    request: LocalQuery,
    *,
    on_token: Callable[[str], None] | None = None,
    parent_id: str | None = None,
) -> LocalResult:
    """Answer the request's question (or, with ``context_only``, only assemble the context); store the trace."""
    settings = request.settings(rt.config)
    history = [t.model_dump() for t in request.history]
    ctx = build_local_context(rt, request.question, settings, budget=request.budget, history=history,
                              exclude=request.exclude)
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
