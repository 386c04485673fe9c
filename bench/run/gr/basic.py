"""GraphRAG 3.2.0's own basic search context builder on a parquet index: evidence recall and tokens.

python -m bench gr-basic --root DIR --budgets 2000,4000,8000,12000 --out X.json

Built the way ``graphrag.query.factory.get_basic_search_engine`` builds it: ``BasicSearchContext`` over
``read_indexer_text_units`` and a ``text_unit_text`` LanceDB store (vectors of each text unit's text, from the
shared cache: the embedder driftgraph uses), cl100k counting, ``k`` from ``BasicSearchConfig()`` (10) and
``max_context_tokens`` = the budget. Also measured with ``k`` = 100, so that at every budget GraphRAG has more
candidates than fit (its defaults stop at 10 chunks whatever the budget).
"""

from __future__ import annotations

from bench.run.gr import offline

offline.setup()

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from bench import metrics  # noqa: E402
from bench.run import data  # noqa: E402
from bench.run.embcache import EmbeddingCache  # noqa: E402
from bench.run.gr import common  # noqa: E402

WIDE_K = 100


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", type=Path, default=data.MUSIQUE)
    ap.add_argument("--questions", type=Path, default=None)
    ap.add_argument("--budgets", default="2000,4000,8000,12000")
    ap.add_argument("--model-id", default="all-MiniLM-L6-v2-int8")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)

    from graphrag.config.models.basic_search_config import BasicSearchConfig

    cache = EmbeddingCache(a.model_id)
    builder, embedder, tmp = common.basic_context_builder(a.root, cache)
    tok = common.tokenizer()
    units = data.text_units(a.root)
    qs = data.questions(a.questions) if a.questions else data.questions()
    budgets = [int(b) for b in a.budgets.split(",") if b]
    default_k = BasicSearchConfig().k

    def run(k: int) -> dict[str, list]:
        out: dict[str, list] = {}
        for budget in budgets:
            rows = []
            for q in qs:
                embedder.embedding(input=[q.question])  # from the cache; timed apart like the local baseline
                t = time.perf_counter()
                res = builder.build_context(query=q.question, k=k, max_context_tokens=budget)
                ms = (time.perf_counter() - t) * 1000
                ctx = res.context_chunks if isinstance(res.context_chunks, str) else "\n\n".join(res.context_chunks)
                gold = [units.get(g, "") for g in q.gold]
                rows.append(
                    {
                        "id": q.id,
                        "hops": q.hops,
                        "recall": metrics.evidence_recall(ctx, gold),
                        "recall_unquoted": common.unquoted_recall(ctx, gold),
                        "tokens": len(tok.encode(ctx)),
                        "ms": ms,
                    }
                )
            out[str(budget)] = rows
        return out

    result = {
        "system": "graphrag-basic",
        "k_default": default_k,
        "k_wide": WIDE_K,
        "quality": run(default_k),
        "quality_wide_k": run(WIDE_K),
    }
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(result, indent=1))
    tmp.cleanup()
