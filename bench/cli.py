"""The bench's one entry point: ``python -m bench <part> [options]``; ``python -m bench --help`` lists the parts.

Parts are looked up by name and their module imported only when run, so the GraphRAG baseline's virtualenv
(which has graphrag but not driftgraph's dependencies) runs its own parts (``gr-*``, ``plots``) through this
same entry point. Each part is a ``main(argv)`` that parses its own options.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from dataclasses import dataclass

SUITE = "bench.run.suite:main"


@dataclass(frozen=True)
class Part:
    target: str  # "module:function"
    help: str
    group: str

    def resolve(self) -> Callable[[list[str]], object]:
        module, _, name = self.target.partition(":")
        fn = getattr(importlib.import_module(module), name)
        if not callable(fn):
            raise TypeError(f"{self.target} is not callable")
        return fn


def _suite(help_: str) -> Part:
    return Part(SUITE, help_, "suite: measure, write results/raw/<part>.json, render latest.md")


def _own(target: str, help_: str) -> Part:
    return Part(target, help_, "own options")


def _worker(target: str, help_: str) -> Part:
    return Part(target, help_, "workers: started by the suite with --out FILE (gr-*: in bench/.venv-graphrag)")


PARTS: dict[str, Part] = {
    "all": _suite("every suite part below but java (~45 min on 2 cores; --quick ~15 min)"),
    "prepare": _suite("embed musique and operation-dulce once into the shared cache; build the baseline venv"),
    "quality": _suite("evidence recall on MuSiQue at 2k/4k/8k/12k tokens, with cross-validation"),
    "speed": _suite("local latency p50/p95, import, start-up, launcher cold start, memory"),
    "scale": _suite("synthetic 10k / 100k / 1M-entity indexes (--scale)"),
    "hnsw": _suite("vector index build time and recall@10 per HNSW setting"),
    "java": _suite("the launcher on Java 17 vs Java 21 (--scale, --javas); not part of all"),
    "drift": _suite("DRIFT chat calls and prompt tokens per question, fake model, both systems"),
    "global": _suite("global search cost, fake model, both systems"),
    "embedder": _suite("the offline embedder: recall, items/s, install size"),
    "routes": _suite("relational / thematic routes on operation-dulce, plus the MuSiQue check"),
    "basic": _suite("GraphRAG 3.2.0's basic search vs driftgraph basic and local on MuSiQue"),
    "report": _own("bench.report.latest:main", "re-render results/latest.md (+ plots) from results/raw/*.json"),
    "drift-matched": _own(
        "bench.report.drift_matched:main", "DRIFT of both systems at a matched call budget, from results/raw (issue 39)"
    ),
    "graphrag-tuned": _own(
        "bench.report.graphrag_tuned:main", "tuned and default GraphRAG beside driftgraph, from results/raw (issue 39)"
    ),
    "plots": _own("bench.report.plots:main", "PNG plots from RAW_DIR into OUT_DIR (needs matplotlib)"),
    "serve": _own("bench.run.dg.serve:main", "context-only local search in-process vs over HTTP, c=1/4/16"),
    "real-model": _own(
        "bench.realmodel.run:main", "index + every mode with a real small model (llama-cpp-python, pinned weights)"
    ),
    "real-model-musique": _own(
        "bench.realmodel.musique:main", "MuSiQue dev passages indexed by the real 1.5B model; resumable (issue 37)"
    ),
    "answers-table": _own("bench.report.answers:main", "the table of a bench answers raw file (EM / F1 / supported)"),
    "estimate-check": _own(
        "bench.realmodel.estimate_check:main", "index --estimate (bound and expected) against a real-model run"
    ),
    "answers": _own("bench.run.dg.answers:main", "EM / F1 of each mode's answers through your model endpoint"),
    "reliability": _own(
        "bench.run.dg.reliability:main", "faults injected by the fake server, per mode; load: 32 clients on serve, 60 s"
    ),
    "metrics-cost": _own(
        "bench.run.dg.metrics_cost:main", "what the serve layers (/metrics, request ids, counters) cost a request"
    ),
    "sensitivity": _own("bench.run.dg.sensitivity:main", "each local constant x0.5..x2, one at a time"),
    "synonyms": _own("bench.run.dg.synonyms:main", "synonym edges per threshold: edges drawn, recall with/without"),
    "synth-questions": _own("bench.run.synth_questions:main", "compose synthetic 2/3/4-hop questions (seeded)"),
    "pipeline-check": _own(
        "bench.run.dg.pipeline_check:main", "local contexts question by question on every set (--compare a run)"
    ),
    "synth-recall": _own("bench.run.dg.synth_recall:main", "recall per hop count on a synthetic question set"),
    "cv": _own("bench.run.dg.cv:main", "5-fold cross-validation of the multi-hop weights"),
    "ppr-cost": _own(
        "bench.run.dg.ppr_cost:main", "what the PageRank walk costs per question, with and without its fetch"
    ),
    "local-recall": _own(
        "bench.run.dg.local_recall:main", "local evidence recall on MuSiQue per budget (self-contained)"
    ),
    "import-speed": _own(
        "bench.run.dg.import_speed:main", "import on musique: the Neo4j write phase and the embedding rate"
    ),
    "drift-cost": _own("bench.run.dg.drift_cost:main", "driftgraph DRIFT cost per question, fake model"),
    "drift-stop": _own(
        "bench.run.dg.drift_stop:main", "DRIFT's stop rule scenario by scenario (issue 37), fake model, no database"
    ),
    "global-cost": _own(
        "bench.run.dg.global_cost:main", "driftgraph global cost per question: full level vs dynamic, fake model"
    ),
    "index-overhead": _own(
        "bench.run.dg.index_overhead:main", "index overhead with an instant fake LLM, and how incremental it stays"
    ),
    "bulk-micro": _own("bench.run.dg.bulk_micro:main", "vector bulk writes: sweep|order SYNTH_DIR SIZES..."),
    "synth": _own("bench.run.synth:main", "generate a seeded synthetic GraphRAG index (--entities, --out)"),
    "imports": _worker("bench.run.dg.imports:main", "driftgraph: import a GraphRAG index, timed"),
    "dg-local": _worker("bench.run.dg.local:main", "driftgraph local: recall per budget and latency"),
    "dg-basic": _worker("bench.run.dg.basic:main", "driftgraph basic and local, paired on MuSiQue"),
    "dg-routes": _worker("bench.run.dg.routes:main", "driftgraph routes on operation-dulce or MuSiQue"),
    "dg-scale": _worker("bench.run.dg.scale:main", "driftgraph import|query on a synthetic index"),
    "dg-hnsw": _worker("bench.run.dg.hnsw:main", "driftgraph HNSW builds and recall@10 against exact search"),
    "dg-llm-cost": _worker("bench.run.dg.llm_cost:main", "driftgraph DRIFT / global calls and tokens, fake model"),
    "gr-local": _worker("bench.run.gr.local:main", "GraphRAG local: recall per budget and latency"),
    "gr-basic": _worker("bench.run.gr.basic:main", "GraphRAG basic search recall per budget"),
    "gr-tune": _worker("bench.run.gr.tune:main", "GraphRAG local / basic knobs swept, chosen by 5-fold CV (issue 39)"),
    "gr-contexts": _worker("bench.run.gr.contexts:main", "GraphRAG local's prompt and context per question (answers)"),
    "gr-scale": _worker("bench.run.gr.scale:main", "GraphRAG local on a synthetic index"),
    "gr-llm-cost": _worker("bench.run.gr.llm_cost:main", "GraphRAG DRIFT / global calls and tokens, fake model"),
}


def usage() -> str:
    lines = ["usage: python -m bench <part> [options]   (python -m bench <part> --help: the part's options)"]
    width = max(map(len, PARTS))
    group = ""
    for name, part in PARTS.items():
        if part.group != group:
            group = part.group
            lines += ["", f"{group}:"]
        lines.append(f"  {name:<{width}}  {part.help}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] in ("-h", "--help"):
        print(usage())
        return 0 if args else 2
    part = PARTS.get(args[0])
    if part is None:
        print(f"python -m bench: unknown part {args[0]!r}\n\n{usage()}", file=sys.stderr)
        return 2
    sys.argv[0] = f"python -m bench {args[0]}"  # the parts' own usage lines
    rc = part.resolve()(args if part.target == SUITE else args[1:])
    return rc if isinstance(rc, int) else 0
