"""Local search's context question by question on every question set: proof that a refactor changed nothing.

python -m bench pipeline-check --uri URI --out FILE [--compare OTHER]

For the dev split and each synthetic/worded set (``bench/questions``) and each budget (2k/4k/8k/12k), it records
context-only local search with the defaults on whatever the database holds (import MuSiQue first): the evidence
recall, the context's tokens and sha256 (first 16 hex digits), the retrieval round trips, and per question the
chunk ranking (its sha256 and first ten ids). Two runs on one import compare exactly: ``--compare OTHER`` lists
every question where anything differs and exits 1 if one does.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

BUDGETS = (2000, 4000, 8000, 12000)
SETS = (
    "dev",
    "musique_synth.jsonl",
    "musique_synth_seed1.jsonl",
    "musique_synth_seed2.jsonl",
    "musique_synth_seed3.jsonl",
    "musique_synth_worded.jsonl",
)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def measure(uri: str) -> dict:
    """Per set, per question: the ranking and each budget's [recall, tokens, context sha, round trips]."""
    from bench import metrics, paths
    from bench.run import data
    from bench.run.dg import common
    from driftgraph.query.local.search import LocalAsk, build_local_context

    units = data.text_units()
    eng = common.engine(uri)
    out: dict = {}
    try:
        for name in SETS:
            qs = data.questions() if name == "dev" else data.questions(paths.QUESTIONS / name)
            vectors = eng.embed([q.question for q in qs])
            rows: dict = {}
            for q, vec in zip(qs, vectors, strict=True):
                row: dict = {"budgets": {}}
                for b in BUDGETS:
                    ask = LocalAsk(q.question, budget=b, query_vector=vec)
                    ctx = build_local_context(eng.runtime.for_run(), ask, eng.config.local)
                    recall = metrics.evidence_recall(ctx.text, [units.get(g, "") for g in q.gold])
                    row["budgets"][str(b)] = [round(recall, 6), ctx.tokens, _sha(ctx.text), ctx.recorder.round_trips]
                    if b == BUDGETS[0]:  # the ranking does not depend on the budget
                        items = ctx.recorder.items
                        ranked = [i.id for i in sorted((i for i in items if i.source == "chunk" and i.rank), key=_rank)]
                        row["ranking"], row["top10"] = _sha("\n".join(ranked)), ranked[:10]
                rows[q.id] = row
            out[name] = rows
            means = {b: round(sum(r["budgets"][str(b)][0] for r in rows.values()) / len(rows), 3) for b in BUDGETS}
            print(name, len(rows), means, flush=True)
    finally:
        eng.close()
    return out


def _rank(item) -> int:  # noqa: ANN001 (a TraceItem)
    return int(item.rank)


def compare(a: dict, b: dict) -> list[str]:
    """``set question`` for every question whose record differs (or is missing on one side)."""
    diffs = []
    for name in sorted(set(a) | set(b)):
        for qid in sorted(set(a.get(name, {})) | set(b.get(name, {}))):
            if a.get(name, {}).get(qid) != b.get(name, {}).get(qid):
                diffs.append(f"{name} {qid}")
    return diffs


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench pipeline-check", description=__doc__.splitlines()[0])
    ap.add_argument("--uri", required=True, help="Neo4j holding the imported MuSiQue index (password: NEO4J_PASSWORD)")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--compare", type=Path, help="an earlier run's file: list the questions that differ")
    a = ap.parse_args(argv)
    result = measure(a.uri)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(result, indent=0, sort_keys=True) + "\n")
    if a.compare is not None:
        diffs = compare(json.loads(a.compare.read_text()), result)
        total = sum(len(v) for v in result.values())
        print(f"{len(diffs)} of {total} questions differ from {a.compare}")
        for d in diffs:
            print(" ", d)
        if diffs:
            sys.exit(1)
