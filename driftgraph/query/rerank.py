"""Optional reranking of local search's chunk candidates (``local.rerank``, docs/concepts/local-search.md "Reranking").

The graph's score decides which chunks are candidates; a cross-encoder (or the chat model) is better at
telling which of the best ``top_n`` actually answer. ``provider``:

* ``none``: nothing happens (the default; retrieval makes no call).
* ``endpoint``: one POST ``{base_url}/rerank`` with ``{model, query, documents, top_n}``; the reply
  ``{results: [{index, relevance_score}]}`` is what Cohere, Jina, vLLM and TEI-compatible servers answer.
* ``llm``: listwise ranking with the chat model (``prompts/rerank_listwise.txt``), the ``top_n`` split over
  at most ``max_llm_calls`` calls; a passage's score is ``1 - position / batch size``.

The reranked chunks go first in reranked order, the rest keep the graph's order; each reranked candidate
carries ``rerank_score`` (in the trace items). The endpoint is retried like an LLM call (llm/retry.py: 429,
5xx, timeouts, refused connections, an unreadable body; full-jitter backoff) within the section's own
``max_retries`` and ``backoff_base_s``; ``llm`` calls retry in the chat client. A reranker still failing raises
``RerankError``: a configured reranker that silently did nothing would make results unexplainable.
"""

from __future__ import annotations

import json
import math
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from driftgraph.errors import ReplyFormatError, RerankError
from driftgraph.llm.jsonreply import extract_json_object
from driftgraph.llm.retry import SYSTEM_JITTER, with_retries
from driftgraph.query import tables as render_rows
from driftgraph.query.budget import Candidate

if TYPE_CHECKING:
    import random

    from driftgraph.config import RerankConfig
    from driftgraph.llm.chat import ChatClient

Truncate = Callable[[str, int], str]
CountMany = Callable[[list[str]], list[int]]


def rerank_chunks(
    chunks: list[Candidate],
    query: str,
    cfg: RerankConfig,
    truncate: Truncate,
    chat: Callable[[], ChatClient],
    render: Callable[..., str],
) -> list[Candidate]:
    """``chunks`` reordered by the configured reranker (unchanged for ``none`` or no chunks)."""
    if cfg.provider == "none" or not chunks:
        return chunks
    head, tail = chunks[: cfg.top_n], chunks[cfg.top_n :]
    docs = [truncate(str((c.payload or {}).get("text") or ""), cfg.doc_tokens) for c in head]
    if cfg.provider == "endpoint":
        scores = endpoint_scores(cfg, query, docs)
    else:
        scores = llm_scores(cfg, query, docs, chat, render)
    for c, s in zip(head, scores, strict=True):
        c.payload = {**(c.payload or {}), "rerank_score": round(s, 4)}
    order = sorted(range(len(head)), key=lambda i: (-scores[i], i))
    return [head[i] for i in order] + tail


def renumber(chunks: list[Candidate], count_many: CountMany) -> list[Candidate]:
    """Ranks 1..n in the new order, rows re-rendered with them (the short id is in the row) and recounted."""
    for i, c in enumerate(chunks, start=1):
        c.rank = i
        c.payload = {**c.payload, "row": render_rows.row("chunk", i, c.payload)}
    for c, n in zip(chunks, count_many([c.payload["row"] for c in chunks]), strict=True):
        c.tokens = n
    return chunks


def endpoint_scores(
    cfg: RerankConfig,
    query: str,
    docs: Sequence[str],
    sleep: Callable[[float], None] = time.sleep,
    rng: random.Random = SYSTEM_JITTER,
) -> list[float]:
    """One POST to ``{base_url}/rerank``, retried on transient failures (``sleep`` and the jitter's ``rng`` are
    injectable for tests); documents the reply leaves out score -inf (they keep their order)."""
    if not cfg.base_url:
        raise RerankError("local.rerank.provider is 'endpoint' but local.rerank.base_url is not set")
    url = cfg.base_url.rstrip("/") + "/rerank"
    body = json.dumps({"model": cfg.model, "query": query, "documents": list(docs), "top_n": len(docs)}).encode()
    headers = {"Content-Type": "application/json"}
    if cfg.api_key:
        headers["Authorization"] = f"Bearer {cfg.api_key}"
    req = urllib.request.Request(url, data=body, headers=headers, method="POST")
    attempts: list[int] = []

    def post() -> Any:
        with urllib.request.urlopen(req, timeout=cfg.timeout_s) as resp:  # noqa: S310 (configured URL)
            return json.loads(resp.read().decode("utf-8"))

    try:
        reply = with_retries(post, cfg, sleep, on_attempt=lambda: attempts.append(1), rng=rng)
    except urllib.error.HTTPError as err:
        raise RerankError(f"reranker {url} answered HTTP {err.code}{_tries(attempts)}") from None
    except json.JSONDecodeError:
        raise RerankError(f"reranker {url} answered something that is not JSON{_tries(attempts)}") from None
    except (urllib.error.URLError, TimeoutError, OSError) as err:
        raise RerankError(f"reranker {url} unreachable{_tries(attempts)}: {getattr(err, 'reason', err)}") from None
    return _scores_from_results(reply, len(docs), url)


def _tries(attempts: list[int]) -> str:
    return f" ({len(attempts)} attempts)" if len(attempts) > 1 else ""


def _scores_from_results(reply: Any, n: int, url: str) -> list[float]:
    results = reply.get("results") if isinstance(reply, dict) else None
    if not isinstance(results, list):
        raise RerankError(f"reranker {url}: the reply has no 'results' list")
    scores = [-math.inf] * n
    for r in results:
        try:
            i, s = int(r["index"]), float(r["relevance_score"])
        except (KeyError, TypeError, ValueError):
            raise RerankError(f"reranker {url}: a result lacks index/relevance_score: {r!r:.80}") from None
        if not 0 <= i < n:
            raise RerankError(f"reranker {url}: result index {i} is out of range (0..{n - 1})")
        scores[i] = s
    return scores


def llm_scores(
    cfg: RerankConfig, query: str, docs: Sequence[str], chat: Callable[[], ChatClient], render: Callable[..., str]
) -> list[float]:
    """Listwise ranking in at most ``max_llm_calls`` calls; unranked passages score 0."""
    size = math.ceil(len(docs) / cfg.max_llm_calls)
    scores = [0.0] * len(docs)
    for start in range(0, len(docs), size):
        batch = docs[start : start + size]
        passages = "\n".join(f"[{i + 1}] {' '.join(d.split())}" for i, d in enumerate(batch))
        res = chat().complete(
            [{"role": "user", "content": render("rerank_listwise", question=query, passages=passages)}],
            phase="rerank",
            max_tokens=8 * len(batch) + 32,
        )
        try:
            ranking = extract_json_object(res.text).get("ranking")
        except ReplyFormatError as err:
            raise RerankError(f"the listwise rerank reply holds no JSON: {err}") from None
        if not isinstance(ranking, list):
            raise RerankError("the listwise rerank reply has no 'ranking' list")
        seen: set[int] = set()
        for pos, num in enumerate(ranking):
            if isinstance(num, int) and 1 <= num <= len(batch) and num not in seen:
                seen.add(num)
                scores[start + num - 1] = 1.0 - pos / len(batch)
    return scores
