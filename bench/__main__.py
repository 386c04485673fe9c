"""``python -m bench all|prepare|quality|speed|scale|hnsw|drift|global|embedder|routes|basic|report [--quick]``
(and ``serve``).

Every part writes its raw numbers to ``bench/results/raw/<part>.json``; ``report`` (run after every part)
renders all raw files present into ``bench/results/latest.md`` and the PNG plots. See bench/README.md.
``python -m bench serve`` (bench/serve.py) measures HTTP against in-process queries on its own;
``python -m bench answers`` (bench/answers.py) scores answers through a user's model endpoint.
"""

from __future__ import annotations

import argparse
import sys
import time

from bench import parts

PARTS = ("prepare", "quality", "speed", "scale", "hnsw", "drift", "global", "embedder", "routes", "basic")
EXTRA = ("java",)  # run only when named: not part of `all`


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["serve"]:  # HTTP vs in-process (bench/serve.py); its own options, not part of `all`
        from bench import serve

        return serve.main(args[1:])
    if args[:1] == ["answers"]:  # answer quality through a user's endpoint (bench/answers.py); its own options
        from bench import answers

        return answers.main(args[1:])
    ap = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    ap.add_argument("part", choices=("all", *PARTS, *EXTRA, "report"))
    ap.add_argument("--quick", action="store_true", help="fewer repetitions, scale at 10k entities only")
    ap.add_argument("--reps", type=int, default=None, help="repetitions of timed runs (default 5, quick 2)")
    ap.add_argument(
        "--scale",
        default=None,
        help="entity counts (default 10000,100000); 1000000 adds ~45 min. Sizes not run keep their earlier rows.",
    )
    ap.add_argument("--neo4j-uri", default=None, help="use this Neo4j (password NEO4J_PASSWORD); WIPES its data")
    ap.add_argument("--neo4j-port", type=int, default=parts.neo4j.DEFAULT_PORT, help="port of the bench's launcher")
    ap.add_argument("--heap", default="4g", help="heap of the bench's launcher")
    ap.add_argument("--page-cache", default="2g", help="page cache of the bench's launcher")
    ap.add_argument("--java", default="", help="java binary of the bench's launcher (default: the launcher's lookup)")
    ap.add_argument(
        "--javas",
        default=None,
        help="the java part: comma-separated java binaries to compare (default: the launcher's lookup and "
        "bench/java21.sh's)",
    )
    a = ap.parse_args(argv)
    a.reps = a.reps or (2 if a.quick else 5)
    a.scale_given = a.scale is not None
    a.scale = [int(x) for x in (a.scale or ("10000" if a.quick else "10000,100000")).split(",")]

    todo = PARTS if a.part == "all" else (() if a.part == "report" else (a.part,))
    t0 = time.perf_counter()
    ctx = parts.Context(a)
    try:
        for part in todo:
            t = time.perf_counter()
            parts.log(f"== {part}")
            getattr(parts, f"run_{part}")(ctx)
            parts.log(f"== {part} done in {time.perf_counter() - t:.0f} s")
    finally:
        ctx.close()
    parts.log("== report")
    parts.run_report(ctx)
    parts.log(f"bench {a.part} finished in {time.perf_counter() - t0:.0f} s -> bench/results/latest.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
