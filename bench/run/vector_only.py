"""The floor every graph method must beat: top chunks by query similarity until the budget is full.

Chunks are ranked by cosine similarity of the shared embedder's vectors, then added whole, best first,
while the running cl100k token count of their texts stays within the budget (the first chunk that does
not fit ends the fill). The context is the chunks' texts joined by blank lines.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from bench import metrics


def assemble(
    query_vec: np.ndarray,
    chunk_ids: Sequence[str],
    chunk_vecs: np.ndarray,
    chunk_texts: Sequence[str],
    chunk_tokens: Sequence[int],
    budget: int,
) -> tuple[list[str], int]:
    """Ids of the chunks that fill ``budget`` tokens in similarity order, and the tokens they use."""
    scores = chunk_vecs @ query_vec
    order = sorted(range(len(chunk_ids)), key=lambda i: (-float(scores[i]), chunk_ids[i]))
    used, picked = 0, []
    for i in order:
        if used + chunk_tokens[i] > budget:
            break
        used += chunk_tokens[i]
        picked.append(chunk_ids[i])
    return picked, used


def run(
    questions: Sequence,
    units: dict[str, str],
    vectors: Callable[[list[str]], np.ndarray],
    count_tokens: Callable[[str], int],
    budgets: Sequence[int],
) -> dict[str, list[dict]]:
    ids = sorted(units)
    texts = [units[i] for i in ids]
    tokens = [count_tokens(t) for t in texts]
    cvecs = vectors(texts)
    qvecs = vectors([q.question for q in questions])
    out: dict[str, list[dict]] = {}
    for b in budgets:
        rows = []
        for q, qv in zip(questions, qvecs, strict=True):
            picked, used = assemble(qv, ids, cvecs, texts, tokens, b)
            ranked = [ids[i] for i in np.argsort(-(cvecs @ qv), kind="stable")[:5]]
            ctx = "\n\n".join(units[i] for i in picked)
            rows.append(
                {
                    "id": q.id,
                    "hops": q.hops,
                    "recall": metrics.evidence_recall(ctx, [units.get(g, "") for g in q.gold]),
                    "tokens": used,
                    "r2": metrics.ranked_recall(ranked, q.gold, 2),
                    "r5": metrics.ranked_recall(ranked, q.gold, 5),
                }
            )
        out[str(b)] = rows
    return out


def with_offline_embedder(questions: Sequence, units: dict[str, str], budgets: Sequence[int]) -> dict[str, list[dict]]:
    """``run`` with the offline embedder's shared vector cache and cl100k token counts (what the bench compares)."""
    from bench.run.embcache import EmbeddingCache
    from driftgraph.llm.embedder import LOCAL_MODEL_ID
    from driftgraph.llm.tokenizer import count_tokens

    cache = EmbeddingCache(LOCAL_MODEL_ID)
    return run(questions, units, cache.get, lambda t: count_tokens(t, "cl100k_base"), budgets)
