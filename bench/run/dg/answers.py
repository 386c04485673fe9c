"""``python -m bench answers --base-url URL --model NAME [--limit N] --out FILE``: answer quality with a model.

Answers the MuSiQue dev questions through any OpenAI-compatible endpoint with each query mode (local,
global, drift, basic) over the MuSiQue index imported from ../shared/data/musique, and scores every answer
by exact match and token F1 against the gold answer (``bench/run/dg/answer_metrics.py``). Next to them, for each
mode's assembled context, and offline (local and basic context-only, no model at all), whether the gold
answer string occurs in the context: what a perfect reader could have answered. ``--offline`` runs only
that part. The raw file holds every answer with its scores and cost, plus the machine, load and command.

Global, basic and DRIFT are asked for a short answer (``response_type``, a config key); local search's
prompt has no such knob, so its longer answers cost it exact match more than F1. Neo4j: the bench's own
launcher, or ``--neo4j-uri`` (password in NEO4J_PASSWORD), whose data is replaced by the import.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from bench import paths
from bench.run import data, machine, neo4j
from bench.run.dg import answer_metrics as am
from bench.run.dg import common

MODES = ("local", "global", "drift", "basic")
OFFLINE_MODES = ("local", "basic")  # the modes that assemble a context without any model call
SHORT = "very short (only the answer itself: a name, date, number or short phrase, no explanation)"


def load_questions(path: Path, limit: int | None) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in data.require(path).read_text(encoding="utf-8").splitlines() if line.strip()]
    for q in rows:
        q["golds"] = [q["answer"], *q.get("answer_aliases", [])]
    return rows[:limit] if limit else rows


def config_extra(args: argparse.Namespace) -> dict[str, Any]:
    llm = {"base_url": args.base_url, "model": args.model, "api_key": args.api_key or "not-needed"}
    short = {"response_type": SHORT}
    return {"llm": llm, "global": short, "basic": short, "drift": short, "trace": {"enabled": False}}


def ask(eng: Any, mode: str, question: dict[str, Any], *, context_only: bool = False) -> dict[str, Any]:
    """One question in one mode: the answer (None context-only), its scores, its context and cost."""
    fields: dict[str, Any] = {"store_trace": False}
    if context_only:
        fields["context_only"] = True
    row: dict[str, Any] = {"id": question["id"], "hops": question.get("hops"), "mode": mode}
    t0 = time.perf_counter()
    try:
        res = getattr(eng, f"query_{mode}")(question["question"], **fields)
    except Exception as err:  # a failed call is a result to count, not the end of the run
        row.update(error=f"{type(err).__name__}: {str(err).splitlines()[0][:200]}", seconds=time.perf_counter() - t0)
        return row
    total = res.cost.phases.get("total", {})
    row.update(
        seconds=round(time.perf_counter() - t0, 3),
        answer_in_context=am.in_context(question["golds"], res.context.text),
        context_tokens=res.context.tokens,
        llm_calls=res.cost.llm_calls,
        prompt_tokens=res.cost.prompt_tokens,
        completion_tokens=res.cost.completion_tokens,
        estimated_calls=int(total.get("estimated_calls", 0)),
        error=None,
    )
    if not context_only:
        answer = res.answer or ""
        golds = question["golds"]
        row.update(answer=answer, em=am.exact_match(answer, golds), f1=am.token_f1(answer, golds))
    return row


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    ok = [r for r in rows if r["error"] is None]
    out: dict[str, Any] = {
        "questions": len(rows),
        "errors": len(rows) - len(ok),
        "answer_in_context": am.mean([r["answer_in_context"] for r in ok]),
        "context_tokens_mean": am.mean([r["context_tokens"] for r in ok]),
    }
    if ok and "em" in ok[0]:
        out.update(
            em=am.mean([r["em"] for r in ok]),
            f1=am.mean([r["f1"] for r in ok]),
            llm_calls_mean=am.mean([r["llm_calls"] for r in ok]),
            prompt_tokens_mean=am.mean([r["prompt_tokens"] for r in ok]),
            estimated_calls=sum(r["estimated_calls"] for r in ok),
        )
    return out


def run(eng: Any, questions: list[dict[str, Any]], modes: list[str], offline: bool) -> dict[str, Any]:
    rows: list[dict[str, Any]] = []
    summary: dict[str, Any] = {}
    runs = [(f"{m}_context", m, True) for m in OFFLINE_MODES]
    if not offline:
        runs += [(m, m, False) for m in modes]
    for label, mode, context_only in runs:
        mode_rows = []
        for i, q in enumerate(questions):
            row = ask(eng, mode, q, context_only=context_only)
            row["mode"] = label
            mode_rows.append(row)
            print(f"{label} {i + 1}/{len(questions)} {'error' if row['error'] else 'ok'}", file=sys.stderr)
        summary[label] = summarise(mode_rows)
        rows += mode_rows
    return {"summary": summary, "rows": rows}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench answers", description=__doc__.splitlines()[0])
    ap.add_argument("--base-url", help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:11434/v1")
    ap.add_argument("--model", help="chat model name as the endpoint knows it")
    ap.add_argument("--api-key", default=os.environ.get("OPENAI_API_KEY"), help="default: OPENAI_API_KEY")
    ap.add_argument("--limit", type=int, default=None, help="first N questions only")
    ap.add_argument("--out", type=Path, required=True, help="raw JSON file to write")
    ap.add_argument("--modes", default=",".join(MODES), help="comma-separated subset of " + ",".join(MODES))
    ap.add_argument("--offline", action="store_true", help="no model: only whether the gold answer is in context")
    ap.add_argument("--index", type=Path, default=data.MUSIQUE, help="GraphRAG index folder to import")
    ap.add_argument("--questions", type=Path, default=None, help="default: INDEX/questions_dev.jsonl")
    ap.add_argument("--keep-index", action="store_true", help="the database already holds INDEX: no import")
    ap.add_argument("--fresh-embeddings", action="store_true", help="embed live instead of bench/.cache/emb")
    ap.add_argument("--neo4j-uri", default=None, help="use this Neo4j (password NEO4J_PASSWORD); REPLACES its data")
    ap.add_argument("--neo4j-port", type=int, default=neo4j.DEFAULT_PORT, help="port of the bench's launcher")
    a = ap.parse_args(argv)
    if not a.offline and not (a.base_url and a.model):
        ap.error("--base-url and --model are required (or --offline)")
    modes = [m for m in a.modes.split(",") if m]
    if bad := [m for m in modes if m not in MODES]:
        ap.error(f"unknown mode(s) {', '.join(bad)}: choose from {', '.join(MODES)}")
    questions = load_questions(a.questions or a.index / "questions_dev.jsonl", a.limit)

    t0 = time.perf_counter()
    with neo4j.database(a.neo4j_uri, a.neo4j_port, "4g", "2g", print) as db:
        extra = {} if a.offline else config_extra(a)
        eng = common.engine(db.uri, db.password, cached=not a.fresh_embeddings, extra=extra)
        try:
            if not a.keep_index:
                eng.import_graphrag(data.require(a.index), reset=True)
            result = run(eng, questions, modes, a.offline)
        finally:
            eng.close()
    payload = {
        "machine": machine.describe(),
        "command": "python -m bench answers " + " ".join(sys.argv[2:] if argv is None else argv),
        "endpoint": None if a.offline else {"base_url": a.base_url, "model": a.model},
        "index": os.path.relpath(a.index.resolve(), paths.ROOT),  # relative to the checkout: no machine's paths
        "seconds": round(time.perf_counter() - t0, 1),
        **result,
    }
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(payload, indent=1, ensure_ascii=False), encoding="utf-8")
    for label, s in result["summary"].items():
        scores = f"EM {s['em']} F1 {s['f1']} " if "em" in s else ""
        print(f"{label:<14} {scores}answer in context {s['answer_in_context']} errors {s['errors']}/{s['questions']}")
    return 0
