"""GraphRAG 3.2.0's local context builder on a synthetic index: load time, assembly latency, client RSS.

python -m bench gr-scale --dir SYNTH --budget 8000 --reps 3 --out X.json

Loads the parquet tables the way its query API does (``read_indexer_*``, community level 2) and fills the
entity LanceDB store from ``embeddings.entity_description.parquet``; each question's vector is handed in.
"""

from __future__ import annotations

from bench.run.gr import offline

offline.setup()

import argparse  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from bench import metrics  # noqa: E402
from bench.run.gr import common  # noqa: E402


class _Vectors:
    """graphrag's embedder interface over the synthetic questions' given vectors."""

    def __init__(self, queries: list[dict]) -> None:
        self._by_text = {q["question"]: q["vector"] for q in queries}

    def embedding(self, *, input: list[str], **_):  # noqa: A002
        return common._Result([self._by_text[t] for t in input])


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", type=Path, required=True)
    ap.add_argument("--budget", type=int, default=8000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--prepare-only", action="store_true", help="write the LanceDB store and stop")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)

    import numpy as np
    import pyarrow.parquet as pq
    from graphrag.query.indexer_adapters import (
        read_indexer_entities,
        read_indexer_relationships,
        read_indexer_reports,
        read_indexer_text_units,
    )

    store_dir = a.dir / "lancedb"
    if not (store_dir / "DONE").is_file():  # the indexer's output, written once, outside the measurement
        emb = pq.read_table(a.dir / "embeddings.entity_description.parquet")
        ids = emb.column("id").to_pylist()
        flat = emb.column("embedding").combine_chunks().flatten().to_numpy()
        vecs = np.asarray(flat, dtype=np.float32).reshape(len(ids), -1)
        del emb, flat
        import pandas as pd

        common.entity_store(pd.DataFrame({"id": ids}), vecs, str(store_dir))
        (store_dir / "DONE").write_text("ok")
    if a.prepare_only:
        a.out.write_text(json.dumps({"prepared_store": str(store_dir)}))
        return
    rss0 = metrics.current_rss_mb()
    t0 = time.perf_counter()
    f = common.read_frames(a.dir)
    store = common.open_entity_store(str(store_dir))
    idx = common.LoadedIndex(
        entities=read_indexer_entities(f["entities"], f["communities"], common.COMMUNITY_LEVEL),
        relationships=read_indexer_relationships(f["relationships"]),
        reports=read_indexer_reports(f["community_reports"], f["communities"], common.COMMUNITY_LEVEL),
        text_units=read_indexer_text_units(f["text_units"]),
        covariates={"claims": []},
        frames={},
        store=store,
        tmpdir=None,
    )
    del f
    queries = json.loads((a.dir / "queries.json").read_text())
    builder = common.local_context_builder(idx, _Vectors(queries))
    load_s = time.perf_counter() - t0
    rss_loaded = metrics.current_rss_mb()
    tok = common.tokenizer()

    def one(q: dict) -> tuple[float, int]:
        t = time.perf_counter()
        res = builder.build_context(query=q["question"], **common.local_params(a.budget))
        ms = (time.perf_counter() - t) * 1000
        return ms, len(tok.encode(res.context_chunks))

    one(queries[0])
    runs = [[one(q) for q in queries] for _ in range(a.reps)]
    out = {
        "system": "graphrag",
        "dir": a.dir.name,
        "load_s": load_s,
        "rss_before_mb": rss0,
        "rss_loaded_mb": rss_loaded,
        "peak_rss_mb": metrics.peak_rss_mb(),
        "ms": [[r[0] for r in rep] for rep in runs],
        "tokens": metrics.mean(r[1] for r in runs[0]),
    }
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(out, indent=1))
