"""Import a GraphRAG folder into driftgraph's Neo4j (reset first) and time it.

python -m bench imports --uri bolt://... --root DIR --out X.json

Vectors come from the shared cache through driftgraph's own import path (the importer asks the engine's
embedder; the bench's embedder answers from the cache), so the timing is the graph + vector writes; the
live embedding rate is measured apart (embedder table).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from bench import metrics
from bench.run import data
from bench.run.dg import common


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--uri", required=True)
    ap.add_argument("--root", type=Path, default=data.MUSIQUE)
    ap.add_argument("--no-cache", action="store_true", help="embed live instead of from the cache")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)

    eng = common.engine(a.uri, cached=not a.no_cache)
    t0 = time.perf_counter()
    summary = eng.import_graphrag(data.require(a.root), reset=True).to_dict()
    wall = time.perf_counter() - t0
    eng.close()
    counts = dict(summary["counts"])
    counts["RELATED"] = summary["relationships"]
    out = {
        "system": "driftgraph-import",
        "data": a.root.name,
        "wall_s": wall,
        "phase_seconds": summary.get("phase_seconds", {}),
        "counts": counts,
        "rows": sum(counts.values()),
        "embedded": {k: v for k, v in summary["embedded"].items() if isinstance(v, dict)},
        "peak_rss_mb": metrics.peak_rss_mb(),
    }
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(out, indent=1))
