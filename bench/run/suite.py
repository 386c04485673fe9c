"""The measuring suite: ``python -m bench all|prepare|quality|speed|scale|hnsw|java|drift|global|embedder|routes|
basic [--quick]``.

Each part writes its raw numbers to ``bench/results/raw/<part>.json``; latest.md and the plots are rendered
again after every run (``bench.report``). The parts share one argument parser and one database.
"""

from __future__ import annotations

import argparse
import time

from bench.report import latest
from bench.run import neo4j, parts, parts_routes
from bench.run.context import Context, log

STEPS = {
    "prepare": parts.run_prepare,
    "quality": parts.run_quality,
    "speed": parts.run_speed,
    "scale": parts.run_scale,
    "hnsw": parts.run_hnsw,
    "drift": parts.run_drift,
    "global": parts.run_global,
    "embedder": parts.run_embedder,
    "routes": parts_routes.run_routes,
    "basic": parts_routes.run_basic,
}
EXTRA = {"java": parts.run_java}  # run only when named: not part of `all`


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    ap.add_argument("part", choices=("all", *STEPS, *EXTRA))
    ap.add_argument("--quick", action="store_true", help="fewer repetitions, scale at 10k entities only")
    ap.add_argument("--reps", type=int, default=None, help="repetitions of timed runs (default 5, quick 2)")
    ap.add_argument(
        "--scale",
        default=None,
        help="entity counts (default 10000,100000); 1000000 adds ~45 min. Sizes not run keep their earlier rows.",
    )
    ap.add_argument("--neo4j-uri", default=None, help="use this Neo4j (password NEO4J_PASSWORD); WIPES its data")
    ap.add_argument("--neo4j-port", type=int, default=neo4j.DEFAULT_PORT, help="port of the bench's launcher")
    ap.add_argument("--heap", default="4g", help="heap of the bench's launcher")
    ap.add_argument("--page-cache", default="2g", help="page cache of the bench's launcher")
    ap.add_argument("--java", default="", help="java binary of the bench's launcher (default: the launcher's lookup)")
    ap.add_argument(
        "--javas",
        default=None,
        help="the java part: comma-separated java binaries to compare (default: the launcher's lookup and "
        "bench/run/java21.sh's)",
    )
    return ap


def main(argv: list[str] | None = None) -> int:
    """``argv`` starts with the part's name (``all`` runs every step but ``java``)."""
    a = parser().parse_args(argv)
    a.reps = a.reps or (2 if a.quick else 5)
    a.scale_given = a.scale is not None
    a.scale = [int(x) for x in (a.scale or ("10000" if a.quick else "10000,100000")).split(",")]
    todo = list(STEPS) if a.part == "all" else [a.part]
    t0 = time.perf_counter()
    ctx = Context(a)
    try:
        for part in todo:
            t = time.perf_counter()
            log(f"== {part}")
            {**STEPS, **EXTRA}[part](ctx)
            log(f"== {part} done in {time.perf_counter() - t:.0f} s")
    finally:
        ctx.close()
    log("== report")
    latest.render()
    log(f"bench {a.part} finished in {time.perf_counter() - t0:.0f} s -> bench/results/latest.md")
    return 0
