"""driftgraph on a synthetic index: ``import`` (reset, precomputed vectors) or ``query`` (assembly latency, RSS).

python -m bench dg-scale import --uri bolt://... --dir SYNTH --out X.json
python -m bench dg-scale query  --uri bolt://... --dir SYNTH --budget 8000 --reps 3 --out X.json

The query process is handed each question's vector, so it never loads the embedding model: its RSS is
what a driftgraph client needs while Neo4j holds the data (the server's RSS is reported apart).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from bench import metrics
from bench.run.dg import common
from bench.run.dg.synthvec import SynthEmbedder


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("action", choices=("import", "query"))
    ap.add_argument("--uri", required=True)
    ap.add_argument("--dir", type=Path, required=True)
    ap.add_argument("--budget", type=int, default=8000)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--extra", type=json.loads, default=None, help='config overrides as JSON, e.g. {"import": {}}')
    a = ap.parse_args(argv)

    out: dict = {"system": "driftgraph", "dir": a.dir.name}
    if a.action == "import":
        from driftgraph.llm.embedder import LOCAL_DIMENSIONS, LOCAL_MODEL_ID

        # the shipped vectors pass the provenance check as a real index's would (bench/run/dg/synthvec.py)
        embedder = SynthEmbedder(a.dir, LOCAL_MODEL_ID, LOCAL_DIMENSIONS)
        # no synonym step: random names have no synonyms, and the shipped vectors are all this embedder knows
        extra = {"synonyms": {"enabled": False}, **(a.extra or {})}
        eng = common.engine(a.uri, embedder=embedder, extra=extra)
        t0 = time.perf_counter()
        summary = eng.import_graphrag(a.dir, reset=True).to_dict()
        out.update(
            wall_s=time.perf_counter() - t0,
            phase_seconds=summary.get("phase_seconds", {}),
            tables={k: v["seconds"] for k, v in summary["tables"].items()},
            precomputed={k: summary["embedded"][k] for k in ("entity", "chunk", "community")},
            config=extra,
        )
    else:
        eng = common.engine(a.uri)
        import numpy as np

        from driftgraph.query.local.search import LocalAsk, build_local_context

        eng.check_schema()
        rt = eng.runtime.for_run()
        queries = json.loads((a.dir / "queries.json").read_text())
        vecs = [np.asarray(q["vector"], dtype=np.float32) for q in queries]
        rss0 = metrics.current_rss_mb()

        def one(i: int) -> tuple[float, int]:
            t = time.perf_counter()
            ctx = build_local_context(
                rt.for_run(), LocalAsk(queries[i]["question"], budget=a.budget, query_vector=vecs[i]), eng.config.local
            )
            return (time.perf_counter() - t) * 1000, ctx.tokens

        one(0)
        runs = [[one(i) for i in range(len(queries))] for _ in range(a.reps)]
        out.update(
            rss_before_mb=rss0,
            peak_rss_mb=metrics.peak_rss_mb(),
            ms=[[r[0] for r in rep] for rep in runs],
            tokens=metrics.mean(r[1] for r in runs[0]),
        )
    eng.close()
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(out, indent=1))
