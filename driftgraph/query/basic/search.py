"""Basic search, the baseline every other mode is compared against: nearest chunks until the budget is full.

The question is embedded once; the chunk vector index (``cypher/query/basic_chunks_vector``) gives the nearest
``top_k`` chunks, optionally fused by reciprocal rank with the ``chunk_fulltext`` hits. Chunks enter best
first, item by item, until the budget derived from the deployment is full; if every hit fitted and the index
may hold more, ``k`` doubles and the search runs again (also after a drop while the room left could still
hold the smallest chunk seen), so a large budget is really filled. The answer comes from
``prompts/basic_search.txt``, checked and retried once if it is no answer (``query/answer.py``); the trace
lists every candidate with its rank, score, tokens and verdict.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from driftgraph.prompts import render_prompt
from driftgraph.query.answer import AnswerCheck, checked_chat_answer
from driftgraph.query.budget import BudgetBreakdown, Candidate, Demand, derive_budget, fill
from driftgraph.query.citations import map_citations
from driftgraph.query.finish import Ending, finish
from driftgraph.query.requests import BasicQuery, check_question
from driftgraph.query.result import BasicResult, ContextInfo
from driftgraph.query.trace import Trace, TraceItem
from driftgraph.store.lucene import or_query

if TYPE_CHECKING:
    import numpy as np

    from driftgraph.config import BasicConfig
    from driftgraph.runtime import Runtime

MAX_K = 10_000
MAX_FETCHES = 8  # 50 -> 10,000 in doublings: the fetch loop is bounded whatever the index answers
SEPARATOR = "\n\n"


@dataclass
class BasicContext:
    """An assembled basic-search context: what the answer call sees, and the trace of how it was filled."""

    question: str
    text: str
    tokens: int
    budget: BudgetBreakdown
    recorder: Trace
    included: list[Candidate] = field(default_factory=list)

    @property
    def chunk_ids(self) -> list[str]:
        """Ids of the included text units in context order (what evidence recall is measured on)."""
        return [c.id for c in self.included]


def render_chunk(short_id: int, text: str) -> str:
    return f"----- Source {short_id} -----\n{text.strip()}"


def fulltext_query(question: str) -> str:
    """The question's words, every one kept, as a plain Lucene OR-query."""
    return or_query(question)


def _prompt(rt: Runtime, settings: BasicConfig, sources: str) -> str:
    return render_prompt("basic_search", rt.config.prompts, sources=sources, response_type=settings.response_type)


def build_basic_context(
    rt: Runtime,
    question: str,
    settings: BasicConfig,
    *,
    budget: int | None = None,
    query_vector: np.ndarray | None = None,
) -> BasicContext:
    """Nearest chunks (hybrid if configured) until ``budget`` (or the derived budget) is full."""
    question = check_question(question)
    started, trips = time.perf_counter(), rt.store.round_trips
    recorder = Trace("basic", question)
    breakdown = derive_budget(
        Demand(
            window=rt.config.llm.model_context_window,
            answer_reserve=settings.answer_reserve,
            prompt=rt.count_tokens(_prompt(rt, settings, "")),
            question=rt.count_tokens(question),
            history=0,
            cap=settings.context_cap,
        ),
        budget,
    )
    vector = rt.embed([question], phase="embed")[0] if query_vector is None else query_vector
    fulltext = (
        rt.store.read("query/basic_chunks_fulltext", query=fulltext_query(question), k=settings.fulltext_k)
        if settings.hybrid and fulltext_query(question)
        else []
    )
    k, fetches = settings.top_k, 0
    reranked: dict[str, float] = {}  # the reranker's scores, so a doubled fetch does not ask again
    while True:
        hits = rt.store.read("query/basic_chunks_vector", k=k, vector=[float(x) for x in vector])
        fetches += 1
        candidates = _rerank(rt, settings, question, _rank(hits, fulltext, settings, rt), reranked, recorder)
        result = fill({"chunk": candidates}, ["chunk"], {}, breakdown.context)
        smallest = min((c.tokens for c in candidates), default=0)
        if len(hits) < k or k >= MAX_K or fetches >= MAX_FETCHES or (result.dropped and result.unused < smallest):
            break  # the index has no more, or the room left is smaller than any chunk seen
        k = min(2 * k, MAX_K)
    included = list(result.included)
    text = SEPARATOR.join(render_chunk(c.rank, c.payload["text"]) for c in included)
    tokens = rt.count_tokens(text) if text else 0
    dropped = list(result.dropped)
    while included and tokens > breakdown.context:  # stored n_tokens were off: never send over budget
        dropped.append((included.pop(), "budget"))
        text = SEPARATOR.join(render_chunk(c.rank, c.payload["text"]) for c in included)
        tokens = rt.count_tokens(text) if text else 0
    verdicts: list[tuple[Candidate, Literal["included", "dropped"], str | None]] = [
        *((c, "included", None) for c in included),
        *((c, "dropped", r) for c, r in sorted(dropped, key=lambda d: d[0].rank)),
    ]
    for c, status, reason in verdicts:
        score, rerank = round(c.score, 6), c.payload.get("rerank_score")
        item = TraceItem("chunk", c.id, c.tokens, status, reason, c.rank, c.hop, score, rerank_score=rerank)
        item.location = c.payload.get("location")
        recorder.add_item(item)
    if not hits and not fulltext:
        _never_silently_empty(rt)
        recorder.absent_sources.append("chunk")
        recorder.notes.append("the chunk index returned nothing: import or index documents first")
    recorder.budget = breakdown
    recorder.round_trips = rt.store.round_trips - trips
    recorder.timings["retrieve"] = time.perf_counter() - started
    recorder.extra["retrieval"] = {
        "k": k,
        "fetches": fetches,
        "hybrid": settings.hybrid,
        "vector_hits": len(hits),
        "fulltext_hits": len(fulltext),
    }
    return BasicContext(question, text, tokens, breakdown, recorder, included)


def _never_silently_empty(rt: Runtime) -> None:
    """No hit from a database that holds chunks is a fault to name (index populating, vectors missing), not an
    empty context to answer from."""
    from driftgraph.errors import StoreError
    from driftgraph.store.online import IndexNotOnline, index_states

    row = rt.store.read("query/basic_chunk_count")[0]
    if not row["chunks"]:
        return
    if not row["embedded"]:
        raise StoreError(
            f"the database holds {row['chunks']} chunks without embeddings: re-run `driftgraph import-graphrag` "
            "without --no-embed (or `driftgraph index`) to embed them"
        )
    state = index_states(rt.store).get("chunk_embedding")
    if state is None:
        raise StoreError("index chunk_embedding is missing: run `driftgraph import-graphrag` or `driftgraph index`")
    raise IndexNotOnline(
        f"the chunk_embedding index ({state.get('state')}) returned nothing although {row['embedded']} chunks "
        "are embedded: retry in a moment (it may still be populating)"
    )


def _rank(
    vector_hits: list[dict[str, Any]], fulltext_hits: list[dict[str, Any]], settings: BasicConfig, rt: Runtime
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
    sep = rt.count_tokens(SEPARATOR)
    out = []
    for rank, chunk_id in enumerate(order, 1):
        row = rows[chunk_id]
        body = row.get("n_tokens")
        body = int(body) if body is not None else rt.count_tokens(str(row.get("text") or "").strip())
        tokens = body + rt.count_tokens(render_chunk(rank, "")) + sep
        hop = "+".join(sorted(hops[chunk_id]))
        payload = {"text": row.get("text") or "", "body_tokens": body + sep, "location": row.get("location")}
        out.append(Candidate("chunk", chunk_id, tokens, scores[chunk_id], rank, hop, payload))
    return out


def _rerank(
    rt: Runtime, settings: BasicConfig, question: str, cands: list[Candidate], known: dict[str, float], rec: Trace
) -> list[Candidate]:
    """The configured reranker (``basic.rerank``, the one local search uses) reorders the best ``top_n``; ranks
    and tokens follow the new order. ``known`` holds scores already asked for: a doubled fetch whose best
    ``top_n`` are the same chunks reuses them instead of calling again."""
    cfg = settings.rerank
    if cfg.provider == "none" or not cands:
        return cands
    head = cands[: cfg.top_n]
    if all(c.id in known for c in head):
        for c in head:
            c.payload = {**c.payload, "rerank_score": known[c.id]}
        order = sorted(range(len(head)), key=lambda i: (-known[head[i].id], i))
        out = [head[i] for i in order] + cands[cfg.top_n :]
    else:
        from driftgraph.llm.tokenizer import truncate_tokens
        from driftgraph.query.rerank import rerank_chunks

        t0 = time.perf_counter()
        encoding = rt.config.tokenizer.encoding
        out = rerank_chunks(
            cands,
            question,
            cfg,
            lambda text, n: truncate_tokens(text, n, encoding),
            rt.chat,
            lambda name, **v: render_prompt(name, rt.config.prompts, **v),
        )
        known.update({c.id: c.payload["rerank_score"] for c in out if "rerank_score" in c.payload})
        rec.timings["rerank_s"] = rec.timings.get("rerank_s", 0.0) + time.perf_counter() - t0
        rec.notes.append(f"chunks reranked by {cfg.provider} (top {len(head)} of {len(cands)})")
    for rank, c in enumerate(out, 1):
        c.rank = rank
        c.tokens = int(c.payload["body_tokens"]) + rt.count_tokens(render_chunk(rank, ""))
    return out


def basic_search(rt: Runtime, request: BasicQuery, *, on_token: Callable[[str], None] | None = None) -> BasicResult:
    """Answer from the nearest chunks (or, with ``context_only``, only assemble them) and store the trace."""
    settings = request.settings(rt.config)
    ctx = build_basic_context(rt, request.question, settings, budget=request.budget)
    answer: str | None = None
    check: AnswerCheck | None = None
    stop_reason = "context_only"
    if not request.context_only:
        if ctx.included:
            messages = [
                {"role": "system", "content": _prompt(rt, settings, ctx.text)},
                {"role": "user", "content": ctx.question},
            ]
            check = checked_chat_answer(rt, rt.chat(), "answer", messages, settings.answer_reserve, on_token)
            answer, stop_reason = check.answer, "answered"
        else:
            answer, stop_reason = render_prompt("no_data_answer", rt.config.prompts).strip(), "no_chunks"
            if on_token is not None:
                on_token(answer)
        by_short = {c.rank: c.id for c in ctx.included}
        where = {c.id: c.payload.get("location") for c in ctx.included}
        ctx.recorder.citations = map_citations(answer or "", "Sources", by_short, where)
    params = {
        **settings.model_dump(),
        "budget": request.budget,
        "context_only": request.context_only,
        "request": request.model_dump(mode="json"),
    }
    context = ContextInfo(ctx.text, ctx.tokens, ctx.budget.context)
    ending = Ending(answer, context, stop_reason, params, question=ctx.question, check=check)
    return finish(rt, request, ctx.recorder, ending, BasicResult)
