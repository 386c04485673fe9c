"""Synonym edges (``store/synonyms.py``): how many edges each threshold draws and what local search's
evidence recall does with them, on one MuSiQue import (MuSiQue dev split).

python -m bench synonyms --uri bolt://... --out bench/results/raw/synonyms.json [--thresholds 0.8,0.85,0.9]

The database must hold ``import-graphrag ../shared/data/musique`` (its synonym edges are rebuilt at each
threshold, then left at the configured default). Per threshold: the step's summary and seconds, and recall at
each budget with ``bridge_synonyms`` on; once more with it off (the edges unused), paired by question.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from bench import metrics
from bench.run import data, machine
from bench.run.dg import common

BUDGETS = (2000, 4000, 8000, 12000)


def _relink(uri: str, threshold: float) -> dict:
    from driftgraph.config import SynonymsConfig
    from driftgraph.store.synonyms import link_synonyms

    eng = common.engine(uri)
    try:
        settings = SynonymsConfig(min_similarity=threshold)
        t0 = time.perf_counter()
        summary = link_synonyms(eng.store, eng.runtime.embedder.embed, settings, 512).to_dict()
        return {**summary, "seconds": round(time.perf_counter() - t0, 2)}
    finally:
        eng.close()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--uri", required=True)
    ap.add_argument("--thresholds", default="0.8,0.85,0.9")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)

    from driftgraph.config import SynonymsConfig

    default = SynonymsConfig().min_similarity
    thresholds = [float(x) for x in a.thresholds.split(",")]
    qs = data.questions()
    units = data.text_units()
    base = common.engine(a.uri)
    qvec = dict(zip([q.id for q in qs], base.embed([q.question for q in qs]), strict=True))
    base.close()
    off = common.local_recall(a.uri, {"bridge_synonyms": False}, qs, qvec, units, BUDGETS)
    runs = {}
    for thr in thresholds:
        step = _relink(a.uri, thr)
        recall = common.local_recall(a.uri, {}, qs, qvec, units, BUDGETS)
        runs[str(thr)] = {
            "step": step,
            "recall": recall,
            "mean": {b: metrics.mean(v) for b, v in recall.items()},
            "minus_off": {b: metrics.paired(recall[b], off[b]) for b in recall},
        }
        print(thr, step["edges_total"], {b: round(metrics.mean(v), 3) for b, v in recall.items()}, flush=True)
    restored = _relink(a.uri, default)
    out = {
        "machine": machine.describe(),
        "command": "python -m bench " + " ".join(sys.argv[1:]),
        "budgets": list(BUDGETS),
        "hops": [q.hops for q in qs],
        "off": {"recall": off, "mean": {b: metrics.mean(v) for b, v in off.items()}},
        "thresholds": runs,
        "restored_default": {"min_similarity": default, **restored},
    }
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(out, indent=1))
