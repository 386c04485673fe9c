"""``python -m bench answers --base-url URL --model NAME [--budget N] [--modes ...] --out FILE``: answer quality.

Answers the MuSiQue dev questions through any OpenAI-compatible endpoint (a hosted model, or the real-model
harness's server: ``python -m bench real-model --serve``) over the MuSiQue index imported from
../shared/data/musique, in driftgraph's modes (local, global, drift, basic) and two foreign contexts answered
by the same model through the same call (``bench/run/dg/foreign.py``): ``vector`` (vector-only chunks) and
``graphrag_local`` (GraphRAG 3.2.0's local context and prompt, prepared by ``python -m bench gr-contexts`` in the
baseline's virtualenv). Every answer is scored, its ``[Data: ...]`` references removed, by exact match and token
F1 against the gold answer and its aliases (``answer_metrics.py``), and as *supported* when the gold answer
occurs in the context rows it cites (``cited.py``; local, basic, vector and graphrag_local, whose contexts are
tables of labelled rows). A question whose answer failed (an error, or a reply the answer check refused)
scores 0. Next to them, offline, whether the gold answer occurs in local's and basic's context at all.

The summary gives each score's mean with its bootstrap interval over the questions, and each mode paired with
local. ``--budget`` fixes every mode's context budget (DRIFT: each step's). The raw file is rewritten after
every answer; ``--resume`` keeps the answers already in it, so a slow CPU run can stop and go on, and
``--reuse FILE:MODES`` takes a mode's answers from an earlier raw file rather than paying for them again (a mode
is paired with local on the questions both answered). Neo4j: the bench's own launcher, or ``--neo4j-uri``
(password in NEO4J_PASSWORD), whose data is replaced by the import.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from bench import metrics, paths
from bench.run import data, env, machine, neo4j
from bench.run.dg import answer_metrics as am
from bench.run.dg import cited, common, foreign

MODES = ("local", "global", "drift", "basic", "vector", "graphrag_local")
DEFAULT_MODES = ("local", "global", "drift", "basic")
OFFLINE_MODES = ("local", "basic")  # the modes that assemble a context without any model call
TABLE_MODES = ("local", "basic", "vector", "graphrag_local")  # contexts of labelled rows: "supported" is read
SHORT = (
    "very short answer (only the answer itself: a name, date, number or short phrase, no explanation), "
    "followed by its citation"
)
SCORES = ("em", "f1", "supported")


def load_questions(path: Path, limit: int | None) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in data.require(path).read_text(encoding="utf-8").splitlines() if line.strip()]
    for q in rows:
        q["golds"] = [q["answer"], *q.get("answer_aliases", [])]
    return rows[:limit] if limit else rows


def config_extra(a: argparse.Namespace) -> dict[str, Any]:
    llm: dict[str, Any] = {"base_url": a.base_url, "model": a.model, "api_key": a.api_key or "not-needed"}
    llm.update(timeout_s=a.timeout, model_context_window=a.ctx)
    short = {"response_type": SHORT}
    drift: dict[str, Any] = {"response_type": SHORT}
    if a.budget:
        drift["local"] = {"context_cap": a.budget}
    extra = {"llm": llm, "local": short, "global": short, "drift": drift, "basic": short, "trace": {"enabled": False}}
    return _merged(extra, json.loads(a.config_extra)) if a.config_extra else extra


def _merged(base: dict[str, Any], more: dict[str, Any]) -> dict[str, Any]:
    """``more`` over ``base``, section by section (``--config-extra``: e.g. a cheaper DRIFT for a CPU model)."""
    out = dict(base)
    for key, value in more.items():
        out[key] = _merged(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def score(row: dict[str, Any], answer: str | None, golds: list[str], context: str) -> None:
    """EM and F1 of the answer without its references; supported where the context's rows can be read."""
    text = cited.strip_citations(answer or "")
    row.update(answer=answer, em=am.exact_match(text, golds), f1=am.token_f1(text, golds))
    if row["mode"] in TABLE_MODES:
        evidence, refs = cited.cited_text(answer or "", context)
        row.update(references=refs, supported=am.in_context(golds, evidence) if evidence else 0.0)


def budget_fields(mode: str, budget: int | None) -> dict[str, Any]:
    """The request field that fixes a mode's context budget (DRIFT's comes from ``drift.local.context_cap``)."""
    return {"budget": budget} if budget and mode in ("local", "basic", "global") else {}


def foreign_budget(a: argparse.Namespace) -> int:
    """The budget of the contexts driftgraph does not assemble: ``--budget``, else the modes' default cap."""
    return a.budget or 8000  # local.context_cap and basic.context_cap


def failed(row: dict[str, Any], err: Exception, t0: float) -> dict[str, Any]:
    """A failed call is a result to count, not the end of the run."""
    row.update(error=f"{type(err).__name__}: {str(err).splitlines()[0][:200]}", seconds=time.perf_counter() - t0)
    return row


def ask(eng: Any, mode: str, question: dict[str, Any], budget: int | None, *, context_only: bool = False) -> dict:
    """One question in one driftgraph mode: the answer (None context-only), its scores, its context and cost."""
    fields: dict[str, Any] = {"store_trace": False, **budget_fields(mode, budget)}
    if context_only:
        fields["context_only"] = True
    row: dict[str, Any] = {"id": question["id"], "hops": question.get("hops"), "mode": mode}
    t0 = time.perf_counter()
    try:
        res = getattr(eng, f"query_{mode}")(question["question"], **fields)
    except Exception as err:
        return failed(row, err, t0)
    total = res.cost.phases.get("total", {})
    row.update(
        seconds=round(time.perf_counter() - t0, 3),
        answer_in_context=am.in_context(question["golds"], res.context.text),
        context_tokens=res.context.tokens,
        llm_calls=res.cost.llm_calls,
        prompt_tokens=res.cost.prompt_tokens,
        completion_tokens=res.cost.completion_tokens,
        estimated_calls=int(total.get("estimated_calls", 0)),
        stop_reason=res.stop_reason,
        error=None,
    )
    if not context_only:
        row["context"] = res.context.text  # what the model read: scores can be recomputed without asking again
        score(row, res.answer or "", question["golds"], res.context.text)
    return row


def ask_foreign(eng: Any, mode: str, question: dict[str, Any], ctx: foreign.Foreign, max_tokens: int) -> dict:
    """One question over a context driftgraph did not assemble, answered through the same checked call."""
    row: dict[str, Any] = {"id": question["id"], "hops": question.get("hops"), "mode": mode}
    t0 = time.perf_counter()
    try:
        got = foreign.answer(eng, ctx, max_tokens)
    except Exception as err:
        return failed(row, err, t0)
    row.update(
        seconds=round(time.perf_counter() - t0, 3),
        answer_in_context=am.in_context(question["golds"], ctx.context),
        context_tokens=ctx.tokens,
        llm_calls=got["llm_calls"],
        prompt_tokens=got["prompt_tokens"],
        stop_reason="answered" if got["answer"] is not None else f"bad_answer ({got['problem']})",
        error=None,
        context=ctx.context,
    )
    score(row, got["answer"], question["golds"], ctx.context)
    return row


def _values(rows: list[dict[str, Any]], key: str) -> list[float]:
    """Per question; a failed question (error, or no answer) scores 0 rather than leaving the mean."""
    return [float(r.get(key) or 0.0) if r["error"] is None else 0.0 for r in rows]


def _common(rows: list[dict[str, Any]], local: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], ...]:
    """Both modes' rows on the questions both answered, in one order: a mode stopped part way (or local rows
    reused from another run, ``--reuse``) is still paired with local on what it did."""
    theirs = {r["id"]: r for r in local}
    mine = [r for r in rows if r["id"] in theirs]
    return mine, [theirs[r["id"]] for r in mine]


def summarise(rows: list[dict[str, Any]], local: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    ok = [r for r in rows if r["error"] is None]
    out: dict[str, Any] = {
        "questions": len(rows),
        "errors": len(rows) - len(ok),
        "answer_in_context": am.mean([r["answer_in_context"] for r in ok]),
        "context_tokens_mean": am.mean([r["context_tokens"] for r in ok]),
    }
    if not ok or "em" not in ok[0]:
        return out
    out.update(
        failed_answers=sum(1 for r in ok if r.get("answer") is None),
        llm_calls_mean=am.mean([r["llm_calls"] for r in ok]),
        prompt_tokens_mean=am.mean([r["prompt_tokens"] for r in ok]),
    )
    for key in SCORES:
        if key == "supported" and "supported" not in ok[0]:
            continue
        values = _values(rows, key)
        lo, hi = metrics.bootstrap_ci(values)
        out[key] = am.mean(values)
        out[f"{key}_ci"] = [round(lo, 4), round(hi, 4)]
        if local is not None and rows is not local:
            mine, theirs = _common(rows, local)
            if mine:
                out[f"{key}_vs_local"] = {**metrics.paired(_values(mine, key), _values(theirs, key)), "n": len(mine)}
    return out


def summaries(rows: list[dict[str, Any]]) -> dict[str, Any]:
    by_mode: dict[str, list[dict[str, Any]]] = {}
    for r in sorted(rows, key=lambda r: str(r["id"])):  # one question order in every mode, resumed or not
        by_mode.setdefault(r["mode"], []).append(r)
    local = by_mode.get("local")
    return {mode: summarise(rs, local) for mode, rs in by_mode.items()}


class Raw:
    """The raw file, rewritten (atomically) after every answer, so a stopped run loses at most the one in flight."""

    def __init__(self, path: Path, header: dict[str, Any], rows: list[dict[str, Any]]) -> None:
        self.path, self.header, self.rows = path, header, rows
        self.done = {(r["mode"], r["id"]) for r in rows if r["error"] is None}

    def add(self, row: dict[str, Any]) -> None:
        self.rows = [r for r in self.rows if (r["mode"], r["id"]) != (row["mode"], row["id"])] + [row]
        self.write(complete=False)

    def write(self, *, complete: bool) -> None:
        payload = {**self.header, "complete": complete, "summary": summaries(self.rows), "rows": self.rows}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(payload, indent=1, ensure_ascii=False), encoding="utf-8")
        tmp.replace(self.path)


def reuse(
    kept: list[dict[str, Any]], spec: str, questions: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """``FILE:MODES``: the rows of MODES for this run's questions taken from another raw file (answers already
    paid for on a slow CPU), recorded in the header with that file's command so the pairing is traceable."""
    path, _, modes = spec.rpartition(":")
    if not path or not modes:
        raise SystemExit(f"--reuse {spec!r}: expected FILE:MODES, e.g. bench/results/raw/answers.json:local")
    other = json.loads(Path(path).read_text(encoding="utf-8"))
    wanted = set(modes.split(","))
    ids = {q["id"] for q in questions}
    have = {(r["mode"], r["id"]) for r in kept}
    taken = [r for r in other["rows"] if r["mode"] in wanted and r["id"] in ids and (r["mode"], r["id"]) not in have]
    note = {"file": path, "modes": sorted(wanted), "rows": len(taken), "command": other.get("command")}
    note.update(budget=other.get("budget"), endpoint=other.get("endpoint"), machine=other.get("machine"))
    return kept + taken, note


def graphrag_contexts(a: argparse.Namespace, log) -> dict[str, dict[str, Any]]:
    """GraphRAG's prompt and context per question id: ``--graphrag-contexts`` or a fresh ``gr-contexts`` run."""
    if a.graphrag_contexts is None:
        out = paths.CACHE / "answers" / f"graphrag_contexts_{foreign_budget(a)}.json"
        args = ["--budget", str(foreign_budget(a)), "--response-type", SHORT, "--root", str(a.index)]
        if a.questions:
            args += ["--questions", str(a.questions)]
        payload = env.run_baseline("gr-contexts", args, out, log)
    else:
        payload = json.loads(a.graphrag_contexts.read_text(encoding="utf-8"))
    return {row["id"]: row for row in payload["rows"]}


def rescore(questions: list[dict[str, Any]], raw: Raw, contexts: Any, log) -> None:
    """Every kept answer scored again by the code as it is now, from its stored context; a row kept from before
    contexts were stored gets its context assembled again (context-only, no model call; ``context_rebuilt``)."""
    by_id = {q["id"]: q for q in questions}
    rebuilt = 0
    for row in raw.rows:
        if row["error"] is not None or "answer" not in row or row["id"] not in by_id:
            continue
        q = by_id[row["id"]]
        if row.get("context") is None:
            row["context"], row["context_rebuilt"] = contexts(row["mode"], q), True
            rebuilt += 1
        score(row, row["answer"], q["golds"], row["context"])
    raw.write(complete=False)
    log(f"rescored {sum(1 for r in raw.rows if 'answer' in r)} answers ({rebuilt} contexts assembled again)")


def run(eng: Any, questions: list[dict[str, Any]], a: argparse.Namespace, raw: Raw, log) -> None:
    """Question by question, every mode in turn: a run stopped part way still pairs its modes on the same
    questions. The offline contexts (no model) come first."""
    modes = [m for m in a.modes.split(",") if m]
    offline = [(f"{m}_context", m) for m in OFFLINE_MODES]
    asked = [] if a.offline else [(m, m) for m in modes]
    gr = graphrag_contexts(a, log) if "graphrag_local" in modes and not a.offline else {}
    vec = None
    if "vector" in modes and not a.offline:
        vec = foreign.VectorOnly(eng, data.text_units(a.index), foreign_budget(a), SHORT)
    if a.rescore:

        def context_of(mode: str, q: dict[str, Any]) -> str:
            if mode == "vector" and vec is not None:
                return vec.context(q["question"]).context
            if mode == "graphrag_local":
                return str(gr[q["id"]]["context"])
            fields = budget_fields(mode, a.budget)
            res = getattr(eng, f"query_{mode}")(q["question"], store_trace=False, context_only=True, **fields)
            return str(res.context.text)

        rescore(questions, raw, context_of, log)
    for runs in (offline, asked):
        for i, q in enumerate(questions):
            for label, mode in runs:
                if (label, q["id"]) in raw.done:
                    continue
                if mode == "vector" and vec is not None:
                    row = ask_foreign(eng, label, q, vec.context(q["question"]), eng.config.basic.answer_reserve)
                elif mode == "graphrag_local":
                    ctx = foreign.graphrag_context(gr[q["id"]], q["question"], eng.runtime.count_tokens)
                    row = ask_foreign(eng, label, q, ctx, eng.config.local.answer_reserve)
                else:
                    row = ask(eng, mode, q, a.budget, context_only=label.endswith("_context"))
                    row["mode"] = label
                raw.add(row)
                log(f"{label} {i + 1}/{len(questions)} {'error' if row['error'] else 'ok'} ({row['seconds']:.0f} s)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench answers", description=__doc__.splitlines()[0])
    ap.add_argument("--base-url", help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:11434/v1")
    ap.add_argument("--model", help="chat model name as the endpoint knows it")
    ap.add_argument("--api-key", default=os.environ.get("OPENAI_API_KEY"), help="default: OPENAI_API_KEY")
    ap.add_argument("--limit", type=int, default=None, help="first N questions only")
    ap.add_argument("--out", type=Path, required=True, help="raw JSON file to write (rewritten after every answer)")
    ap.add_argument("--resume", action="store_true", help="keep the answers already in --out; ask only the rest")
    ap.add_argument("--rescore", action="store_true", help="with --resume: score the kept answers again first")
    ap.add_argument(
        "--reuse",
        default=None,
        metavar="FILE:MODES",
        help="keep these modes' answers from another raw file (its command and budget are recorded), e.g. a.json:local",
    )
    ap.add_argument("--modes", default=",".join(DEFAULT_MODES), help="comma-separated subset of " + ",".join(MODES))
    ap.add_argument("--budget", type=int, default=None, help="context budget of every mode (default: derived)")
    ap.add_argument("--ctx", type=int, default=128_000, help="llm.model_context_window of the endpoint's model")
    ap.add_argument("--timeout", type=float, default=120.0, help="llm.timeout_s: seconds one chat call may take")
    ap.add_argument("--config-extra", default=None, help="JSON merged over the run's config, e.g. DRIFT's caps")
    ap.add_argument("--offline", action="store_true", help="no model: only whether the gold answer is in context")
    ap.add_argument("--index", type=Path, default=data.MUSIQUE, help="GraphRAG index folder to import")
    ap.add_argument("--questions", type=Path, default=None, help="default: INDEX/questions_dev.jsonl")
    ap.add_argument("--graphrag-contexts", type=Path, default=None, help="a gr-contexts output (default: run it)")
    ap.add_argument("--keep-index", action="store_true", help="the database already holds INDEX: no import")
    ap.add_argument("--fresh-embeddings", action="store_true", help="embed live instead of bench/.cache/emb")
    ap.add_argument("--neo4j-uri", default=None, help="use this Neo4j (password NEO4J_PASSWORD); REPLACES its data")
    ap.add_argument("--neo4j-port", type=int, default=neo4j.DEFAULT_PORT, help="port of the bench's launcher")
    a = ap.parse_args(argv)
    if not a.offline and not (a.base_url and a.model):
        ap.error("--base-url and --model are required (or --offline)")
    if bad := [m for m in a.modes.split(",") if m and m not in MODES]:
        ap.error(f"unknown mode(s) {', '.join(bad)}: choose from {', '.join(MODES)}")
    questions = load_questions(a.questions or a.index / "questions_dev.jsonl", a.limit)
    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
    header = {
        "machine": machine.describe(),
        "command": "python -m bench answers " + " ".join(sys.argv[2:] if argv is None else argv),
        "endpoint": None if a.offline else {"base_url": a.base_url, "model": a.model},
        "index": os.path.relpath(a.index.resolve(), paths.ROOT),  # relative to the checkout: no machine's paths
        "budget": a.budget,
        "config_extra": json.loads(a.config_extra) if a.config_extra else None,
    }
    before = json.loads(a.out.read_text(encoding="utf-8")) if a.resume and a.out.exists() else {}
    kept = before.get("rows", [])
    if "reused" in before:  # a resumed run still says where its reused rows came from
        header["reused"] = before["reused"]
    if a.reuse:
        kept, note = reuse(kept, a.reuse, questions)
        if note["rows"] or "reused" not in header:  # resumed with --reuse again: the first record stands
            header["reused"] = note
    raw = Raw(a.out, header, kept)
    t0 = time.perf_counter()
    with neo4j.database(a.neo4j_uri, a.neo4j_port, "4g", "2g", log) as db:
        extra = {} if a.offline else config_extra(a)
        eng = common.engine(db.uri, db.password, cached=not a.fresh_embeddings, extra=extra)
        try:
            if not a.keep_index:
                eng.import_graphrag(data.require(a.index), reset=True)
            run(eng, questions, a, raw, log)
        finally:
            eng.close()
    raw.header["seconds_this_run"] = round(time.perf_counter() - t0, 1)
    raw.write(complete=True)
    for label, s in summaries(raw.rows).items():
        scores = " ".join(f"{k} {s[k]} {s[k + '_ci']}" for k in SCORES if k in s)
        print(f"{label:<16} {scores} answer in context {s['answer_in_context']} errors {s['errors']}/{s['questions']}")
    return 0
