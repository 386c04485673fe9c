"""Basic search, the baseline every other mode is compared against: nearest chunks until the budget is full.

The question is embedded once; the chunk vector index (``cypher/query/basic_chunks_vector``) gives the nearest
``top_k`` chunks, optionally fused by reciprocal rank with the ``chunk_fulltext`` hits. Chunks enter best
first, item by item, until the budget derived from the deployment is full; if every hit fitted and the index
may hold more, ``k`` doubles and the search runs again (also after a drop while the room left could still
hold the smallest chunk seen), so a large budget is really filled. The answer comes
from ``prompts/basic_search.txt``; the trace lists every candidate with its rank, score, tokens and verdict.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from driftgraph.prompts import render_prompt
from driftgraph.query.budget import BudgetBreakdown, Candidate, derive_budget, fill
from driftgraph.query.citations import check_question, map_citations
from driftgraph.query.result import ContextInfo, SearchResult, cost_dict
from driftgraph.query.trace import TraceItem, TraceRecorder, write_trace

if TYPE_CHECKING:
    import numpy as np

    from driftgraph.config import BasicConfig
    from driftgraph.runtime import QueryDeps

_WORD = re.compile(r"\w+")
MAX_K = 10_000
SEPARATOR = "\n\n"


@dataclass
class BasicContext:
    """An assembled basic-search context: what the answer call sees, and the trace of how it was filled."""

    question: str
    text: str
    tokens: int
    budget: BudgetBreakdown
    recorder: TraceRecorder
    included: list[Candidate] = field(default_factory=list)

    @property
    def chunk_ids(self) -> list[str]:
        """Ids of the included text units in context order (what evidence recall is measured on)."""
        return [c.id for c in self.included]


def render_chunk(short_id: int, text: str) -> str:
    return f"----- Source {short_id} -----\n{text.strip()}"


def fulltext_query(question: str) -> str:
    """The question's words as a plain Lucene OR-query: no user syntax, nothing to escape."""
    return " ".join(w.lower() for w in _WORD.findall(question))


def _prompt(deps: QueryDeps, settings: BasicConfig, sources: str) -> str:
    return render_prompt("basic_search", deps.config.prompts, sources=sources, response_type=settings.response_type)


def build_basic_context(
    deps: QueryDeps,
    question: str,
    settings: BasicConfig,
    *,
    budget: int | None = None,
    query_vector: np.ndarray | None = None,
) -> BasicContext:
    """Nearest chunks (hybrid if configured) until ``budget`` (or the derived budget) is full."""
    question = check_question(question)
    started, trips = time.perf_counter(), deps.store.round_trips
    recorder = TraceRecorder("basic", question)
    breakdown = derive_budget(
        window=deps.config.llm.model_context_window,
        answer_reserve=settings.answer_reserve,
        prompt=deps.count_tokens(_prompt(deps, settings, "")),
        question=deps.count_tokens(question),
        history=0,
        cap=settings.context_cap,
        override=budget,
    )
    vector = deps.embed([question], phase="embed")[0] if query_vector is None else query_vector
    fulltext = (
        deps.store.read("query/basic_chunks_fulltext", query=fulltext_query(question), k=settings.fulltext_k)
        if settings.hybrid and fulltext_query(question)
        else []
    )
    k, fetches = settings.top_k, 0
    while True:
        hits = deps.store.read("query/basic_chunks_vector", k=k, vector=[float(x) for x in vector])
        fetches += 1
        candidates = _rank(hits, fulltext, settings, deps)
        result = fill({"chunk": candidates}, ["chunk"], {}, breakdown.context)
        smallest = min((c.tokens for c in candidates), default=0)
        if len(hits) < k or k >= MAX_K or (result.dropped and result.unused < smallest):
            break  # the index has no more, or the room left is smaller than any chunk seen
        k = min(2 * k, MAX_K)
    included = list(result.included)
    text = SEPARATOR.join(render_chunk(c.rank, c.payload["text"]) for c in included)
    tokens = deps.count_tokens(text) if text else 0
    dropped = list(result.dropped)
    while included and tokens > breakdown.context:  # stored n_tokens were off: never send over budget
        dropped.append((included.pop(), "budget"))
        text = SEPARATOR.join(render_chunk(c.rank, c.payload["text"]) for c in included)
        tokens = deps.count_tokens(text) if text else 0
    for c in included:
        recorder.add_item(TraceItem("chunk", c.id, c.tokens, "included", None, c.rank, c.hop, round(c.score, 6)))
    for c, reason in sorted(dropped, key=lambda d: d[0].rank):
        recorder.add_item(TraceItem("chunk", c.id, c.tokens, "dropped", reason, c.rank, c.hop, round(c.score, 6)))
    if not hits and not fulltext:
        recorder.absent_sources.append("chunk")
        recorder.notes.append("the chunk index returned nothing: import or index documents first")
    recorder.budget = breakdown.to_dict()
    recorder.round_trips = deps.store.round_trips - trips
    recorder.timings["retrieve"] = time.perf_counter() - started
    recorder.extra["retrieval"] = {
        "k": k,
        "fetches": fetches,
        "hybrid": settings.hybrid,
        "vector_hits": len(hits),
        "fulltext_hits": len(fulltext),
    }
    return BasicContext(question, text, tokens, breakdown, recorder, included)


def _rank(
    vector_hits: list[dict[str, Any]], fulltext_hits: list[dict[str, Any]], settings: BasicConfig, deps: QueryDeps
) -> list[Candidate]:
    """Vector order, or reciprocal rank fusion with the fulltext hits; ties broken by id."""
    rows: dict[str, dict[str, Any]] = {}
    scores: dict[str, float] = {}
    hops: dict[str, set[str]] = {}
    for source, hits in (("vector", vector_hits), ("fulltext", fulltext_hits)):
        for place, row in enumerate(hits, 1):
            rows.setdefault(row["id"], row)
            hops.setdefault(row["id"], set()).add(source)
            if settings.hybrid:
                scores[row["id"]] = scores.get(row["id"], 0.0) + 1.0 / (settings.rrf_k + place)
            elif source == "vector":
                scores[row["id"]] = float(row["score"])
    order = sorted(scores, key=lambda i: (-scores[i], i))
    sep = deps.count_tokens(SEPARATOR)
    out = []
    for rank, chunk_id in enumerate(order, 1):
        row = rows[chunk_id]
        body = row.get("n_tokens")
        body = int(body) if body is not None else deps.count_tokens(str(row.get("text") or "").strip())
        tokens = body + deps.count_tokens(render_chunk(rank, "")) + sep
        hop = "+".join(sorted(hops[chunk_id]))
        out.append(Candidate("chunk", chunk_id, tokens, scores[chunk_id], rank, hop, {"text": row.get("text") or ""}))
    return out


def basic_search(
    deps: QueryDeps,
    question: str,
    settings: BasicConfig,
    *,
    budget: int | None = None,
    context_only: bool = False,
    on_token: Callable[[str], None] | None = None,
    store_trace: bool = True,
) -> SearchResult:
    """Answer from the nearest chunks (or, with ``context_only``, only assemble them) and store the trace."""
    ctx = build_basic_context(deps, question, settings, budget=budget)
    answer: str | None = None
    stop_reason = "context_only"
    if not context_only:
        if ctx.included:
            messages = [
                {"role": "system", "content": _prompt(deps, settings, ctx.text)},
                {"role": "user", "content": ctx.question},
            ]
            reply = deps.chat().complete(
                messages, phase="answer", max_tokens=settings.answer_reserve, on_token=on_token
            )
            answer, stop_reason = reply.text, "answered"
        else:
            answer, stop_reason = render_prompt("no_data_answer", deps.config.prompts).strip(), "no_chunks"
            if on_token is not None:
                on_token(answer)
        ctx.recorder.citations = map_citations(answer, "Sources", {c.rank: c.id for c in ctx.included})
    cost = cost_dict(deps.ledger.to_dict(), deps.ledger.to_dict(per_phase=True))
    rid = None
    if store_trace:
        params = {**settings.model_dump(), "budget": budget, "context_only": context_only}
        rid = write_trace(
            deps.store,
            ctx.recorder,
            deps.config.trace,
            query=ctx.question,
            params=params,
            cost=cost,
            stop_reason=stop_reason,
            context_tokens=ctx.tokens,
        )
    return SearchResult(
        mode="basic",
        question=ctx.question,
        answer=answer,
        retrieval_id=rid,
        context=ContextInfo(ctx.text, ctx.tokens, ctx.budget.context),
        trace=ctx.recorder.to_dict(),
        cost=cost,
        extra={"stop_reason": stop_reason},
    )
