"""``python -m bench real-model``: index the sample documents and ask every mode with a real small model.

Sets up its own model server (``server.py``: llama-cpp-python, pinned, in a venv of its own) on pinned
weights (``weights.py``), then runs what a user runs: ``index --estimate`` and ``index`` on examples/docs,
and each question of ``questions.json`` in local, basic, global and DRIFT. It records, per phase (each phase
is one prompt file, ``PROMPT_OF``): calls, replies read first time / after a repair / never, response-format
fallbacks, tokens and seconds, the estimate against what the run spent, and every answer with its stop
reason, its answer check and whether its citations name items that were shown. The raw JSON goes to
``bench/results/raw/real_model_<model>.json``; ``--serve`` only starts the server (for ``bench answers``).
Neo4j: the bench's launcher, or ``--neo4j-uri`` (password NEO4J_PASSWORD), whose data is REPLACED.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import paths
from bench.realmodel import server, weights
from bench.run import machine, neo4j

QUESTIONS = Path(__file__).resolve().parent / "questions.json"
DOCS = paths.ROOT / "examples" / "docs"
MODES = ("local", "basic", "global", "drift")
# the prompt file each ledger phase sends (prompts/<name>.txt)
PROMPT_OF = {
    "extract": "extract_graph",
    "extract_gleaning": "extract_graph_continue",
    "claims": "extract_claims",
    "summarize": "summarize_descriptions",
    "report": "community_report",
    "answer": "local_search / basic_search",
    "map": "global_map",
    "rate": "global_rate",
    "reduce": "global_reduce / drift_reduce",
    "primer": "drift_primer",
    "local": "drift_local",
    "route": "route_question",
}
TOKEN_KEYS = ("prompt_tokens", "completion_tokens")
PARSE_KEYS = (
    "llm_calls", "parsed_first", "parsed_repaired", "unparsed", "salvaged", "loops_cut", "format_fallbacks",
    "failed_calls",
)  # fmt: skip


def config_extra(base_url: str, model: str, ctx: int, cache_dir: Path) -> dict[str, Any]:
    """Only what the README's "Local model servers" section tells a user to set, plus a long timeout (CPU)."""
    return {
        "llm": {
            "base_url": base_url,
            "model": model,
            "api_key": "not-needed",
            "timeout_s": 900,
            "model_context_window": ctx,
        },
        "index": {"cache_dir": str(cache_dir), "loop_guard": True},
    }


def per_phase(phases: dict[str, dict[str, int]]) -> dict[str, dict[str, Any]]:
    return {
        name: {"prompt": PROMPT_OF.get(name), **{k: c.get(k, 0) for k in (*PARSE_KEYS, *TOKEN_KEYS)}}
        for name, c in phases.items()
        if name != "total"
    }


def citations_valid(cites: dict[str, Any] | None) -> bool | None:
    """None when nothing was cited; False when any cited number or id was not shown to the model."""
    if not cites:
        return None
    bad = cites.get("unmapped") or cites.get("invalid")
    return not bad


def ask(eng: Any, mode: str, q: dict[str, Any]) -> dict[str, Any]:
    from driftgraph.query.answer_check import check_answer

    row: dict[str, Any] = {"id": q["id"], "mode": mode}
    t0 = time.perf_counter()
    try:
        res = getattr(eng, f"query_{mode}")(q["question"])
    except Exception as err:  # a failed question is a result to record, not the end of the run
        row.update(error=f"{type(err).__name__}: {str(err).splitlines()[0][:300]}")
        row["stop_reason"] = getattr(err, "stop_reason", None) or "error"
        row["seconds"] = round(time.perf_counter() - t0, 1)
        return row
    answer = res.answer or ""
    row.update(
        seconds=round(time.perf_counter() - t0, 1),
        stop_reason=res.stop_reason,
        answer=res.answer,
        answer_check=check_answer(res.answer) if res.answer is not None else None,
        expected_found=[w for w in q.get("expect", []) if w.casefold() in answer.casefold()],
        citations=res.trace.citations,
        citations_valid=citations_valid(res.trace.citations),
        context_tokens=res.context.tokens,
        retrieval_id=res.retrieval_id,
        phases=per_phase(res.cost.phases),
        error=None,
    )
    return row


def run(
    eng: Any,
    questions: list[dict[str, Any]],
    modes: list[str],
    docs: Path,
    log=print,
    *,
    keep_index: bool = False,
    save=None,
) -> dict[str, Any]:
    """Estimate and index ``docs`` (unless ``keep_index``: the database already holds them), then every question
    in every mode; ``save(partial)`` is called after each answer, so a long run that is stopped keeps its rows."""
    t0 = time.perf_counter()
    if keep_index:
        out: dict[str, Any] = {"index": "kept: built by an earlier run", "answers": []}
        return _answer_all(eng, questions, modes, out, t0, log, save)
    estimate = eng.estimate_index(docs)
    log(f"estimate: {estimate['total']['calls']} calls, <= {estimate['total']['prompt_tokens']} prompt tokens")
    t1 = time.perf_counter()
    summary = eng.index(docs, reset=True).to_dict()
    index_s = round(time.perf_counter() - t1, 1)
    spent = summary["llm"]
    log(f"index: {index_s}s, {spent['total']['llm_calls']} calls, failures {summary['failures']['count']}")
    stages = {
        s["stage"]: {
            "estimated_calls": s["calls"],
            "estimated_prompt_tokens": s["prompt_tokens"],
            "estimated_completion_tokens_max": s["completion_tokens_max"],
            "expected_calls": s["expected_calls"],
            "expected_prompt_tokens": s["expected_prompt_tokens"],
            "expected_completion_tokens": s["expected_completion_tokens"],
            "calls": spent.get(s["stage"], {}).get("llm_calls", 0),
            "prompt_tokens": spent.get(s["stage"], {}).get("prompt_tokens", 0),
            "completion_tokens": spent.get(s["stage"], {}).get("completion_tokens", 0),
        }
        for s in estimate["stages"]
    }
    out = {
        "estimate": estimate["total"],
        "estimate_vs_actual": stages,
        "index": {
            "seconds": index_s,
            "graph": {k: summary.get(k) for k in ("entities", "relationships", "communities", "reports", "claims")},
            "failures": summary["failures"],
            "phases": per_phase(spent),
            "stage_seconds": summary.get("seconds"),
        },
        "answers": [],
    }
    return _answer_all(eng, questions, modes, out, t0, log, save)


def _answer_all(eng: Any, questions: list, modes: list[str], out: dict[str, Any], t0: float, log, save) -> dict:
    for q in questions:
        for mode in modes:
            row = ask(eng, mode, q)
            log(f"{q['id']} {mode}: {row['stop_reason']} in {row['seconds']}s")
            out["answers"].append(row)
            out["seconds"] = round(time.perf_counter() - t0, 1)
            if save is not None:
                save(out)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench real-model", description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=sorted(weights.MODELS), default="0.5b", help="pinned weights to run")
    ap.add_argument("--threads", type=int, default=2, help="llama.cpp threads (default: 2, the machine's cores)")
    ap.add_argument("--ctx", type=int, default=8192, help="the server's context size (llm.model_context_window)")
    ap.add_argument("--modes", default=",".join(MODES), help="comma-separated subset of " + ",".join(MODES))
    ap.add_argument("--questions", type=Path, default=QUESTIONS, help="questions JSON (default: the harness's)")
    ap.add_argument("--limit", type=int, default=None, help="first N questions only")
    ap.add_argument("--docs", type=Path, default=DOCS, help="documents to index (default: examples/docs)")
    ap.add_argument("--out", type=Path, default=None, help="default: bench/results/raw/real_model_<model>.json")
    ap.add_argument("--base-url", default=None, help="use this running server instead of starting one")
    ap.add_argument("--serve", action="store_true", help="only start the server and wait (Ctrl-C stops it)")
    ap.add_argument("--prepare", action="store_true", help="only fetch the weights and build the server's venv")
    ap.add_argument("--keep-index", action="store_true", help="the database holds the index already: only ask")
    ap.add_argument("--neo4j-uri", default=None, help="use this Neo4j (password NEO4J_PASSWORD); REPLACES its data")
    ap.add_argument("--neo4j-port", type=int, default=neo4j.DEFAULT_PORT, help="port of the bench's launcher")
    a = ap.parse_args(argv)
    a.argv = list(sys.argv[2:] if argv is None else argv)
    # a stopped run (kill, CI timeout) stops its model server too: SIGTERM unwinds through server.running()
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    modes = [m for m in a.modes.split(",") if m]
    if bad := [m for m in modes if m not in MODES]:
        ap.error(f"unknown mode(s) {', '.join(bad)}: choose from {', '.join(MODES)}")
    questions = json.loads(a.questions.read_text(encoding="utf-8"))["questions"][: a.limit]
    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
    cache = paths.CACHE / "realmodel"
    if a.base_url:
        payload = _measure(a, a.base_url, "served-model", questions, modes, log)
    else:
        model = weights.ensure(weights.MODELS[a.model], cache, log)
        python = server.ensure_venv(cache / "venv", log)
        if a.prepare:
            log(f"real-model ready: {python} serves {model}")
            return 0
        with server.running(python, model, threads=a.threads, ctx=a.ctx, log_dir=cache / "logs") as srv:
            if a.serve:
                print(f"real-model server: {srv.base_url} (model {srv.model}); Ctrl-C stops it", flush=True)
                try:
                    while True:
                        time.sleep(3600)
                except KeyboardInterrupt:
                    return 0
            payload = _measure(a, srv.base_url, srv.model, questions, modes, log)
    out = a.out or _default_out(a)
    _write(out, payload)
    log(f"wrote {out}")
    return 0


def _measure(a: argparse.Namespace, base_url: str, model: str, questions: list, modes: list[str], log) -> dict:
    from bench.run.dg import common

    head = {
        "machine": machine.describe(),
        "command": "python -m bench real-model " + " ".join(a.argv),
        "model": {"weights": a.model, "sha256": weights.MODELS[a.model].sha256, "threads": a.threads, "ctx": a.ctx},
    }

    def save(partial: dict[str, Any]) -> None:
        _write(a.out or _default_out(a), {**head, **partial, "complete": False})

    with neo4j.database(a.neo4j_uri, a.neo4j_port, "2g", "1g", log) as db, tempfile.TemporaryDirectory() as tmp:
        eng = common.engine(db.uri, db.password, cached=False, extra=config_extra(base_url, model, a.ctx, Path(tmp)))
        try:
            result = run(eng, questions, modes, a.docs, log, keep_index=a.keep_index, save=save)
        finally:
            eng.close()
    return {**head, **result, "complete": True}


def _default_out(a: argparse.Namespace) -> Path:
    return paths.RAW / f"real_model_{a.model}.json"


def _write(out: Path, payload: dict[str, Any]) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    tmp.write_text(json.dumps(payload, indent=1, ensure_ascii=False), encoding="utf-8")
    tmp.replace(out)
