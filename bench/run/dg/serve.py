"""``python -m bench serve``: what HTTP costs. Context-only local search in-process (``Engine.query``) vs over
HTTP (``driftgraph serve`` as a subprocess, ``POST /v1/query/local``) at concurrency 1, 4 and 16.

Both sides use the same config (real local embedder, traces stored), the same questions (musique's, cycled)
and the same Neo4j; the HTTP side is a separate process, as users run it. Per level: p50/p95/mean latency,
requests/s and errors; apart from the search, what building and encoding the envelope cost. The paired
comparison at concurrency 1 (each question both ways back to back) runs ``--rounds`` times, each against a
freshly started server, and reports the spread over rounds. Writes ``bench/results/raw/serve.json`` (with
the machine and the command) and prints a table. ``--data operation-dulce`` runs on the small set when a
musique import is too slow for the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from bench import metrics
from bench.paths import RAW
from bench.run import data, machine
from bench.run import neo4j as bench_neo4j
from bench.run.dg import common, serve_proc


def _log(msg: str) -> None:
    print(msg, flush=True)


def _questions(name: str) -> list[str]:
    if name == "musique":
        return [q.question for q in data.questions()]
    return [
        "Who leads the team at Dulce base?",
        "What is Operation: Dulce?",
        "What did Alex Mercer find?",
        "Which organisations are involved at Dulce?",
        "What is the role of Taylor Cruz?",
        "What happened in the control room?",
    ]


def _import(uri: str, root: Path) -> float:
    eng = common.engine(uri, cached=True)  # vectors from the shared cache: same model, no live embedding
    t0 = time.perf_counter()
    eng.import_graphrag(data.require(root), reset=True)
    eng.close()
    return time.perf_counter() - t0


def _summary(latencies: list[float], errors: int, wall: float) -> dict[str, Any]:
    ms = [x * 1000 for x in latencies]
    return {
        "requests": len(latencies) + errors,
        "errors": errors,
        "p50_ms": metrics.percentile(ms, 50) if ms else None,
        "p95_ms": metrics.percentile(ms, 95) if ms else None,
        "mean_ms": sum(ms) / len(ms) if ms else None,
        "rps": len(latencies) / wall if wall > 0 else None,
        "wall_s": wall,
    }


def _load(call: Any, questions: list[str], n: int, concurrency: int) -> dict[str, Any]:
    """``n`` calls from ``concurrency`` threads; each call's latency, failures counted apart."""
    latencies: list[float] = []
    errors: list[str] = []

    failed_ms: list[float] = []

    def one(i: int) -> None:
        q = questions[i % len(questions)]
        t = time.perf_counter()
        try:
            call(q)
        except Exception as err:
            errors.append(f"{type(err).__name__}: {str(err)[:200]}")
            failed_ms.append((time.perf_counter() - t) * 1000)  # a slow failure stretches the wall (req/s)
            return
        latencies.append(time.perf_counter() - t)

    t0 = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(one, range(n)))
    out = _summary(latencies, len(errors), time.perf_counter() - t0)
    out["first_errors"] = errors[:3]
    out["failed_ms"] = sorted(failed_ms, reverse=True)[:10]
    out["max_ms"] = max([x * 1000 for x in latencies] + failed_ms, default=None)
    return out


def _paired(direct: Any, over_http: Any, questions: list[str], n: int) -> dict[str, Any]:
    """``n`` questions each asked both ways back to back at concurrency 1, the order alternating, so both sides
    see the same moment of a shared machine's load; the HTTP cost is the median of the per-pair differences."""
    diffs: list[float] = []
    sides: dict[str, list[float]] = {"in_process": [], "http": []}
    errors: list[str] = []
    for i in range(n):
        q = questions[i % len(questions)]
        order = [("in_process", direct), ("http", over_http)]
        took: dict[str, float] = {}
        try:
            for name, call in order if i % 2 == 0 else order[::-1]:
                t = time.perf_counter()
                call(q)
                took[name] = (time.perf_counter() - t) * 1000
        except Exception as err:
            errors.append(f"{type(err).__name__}: {str(err)[:200]}")
            continue
        for name, ms in took.items():
            sides[name].append(ms)
        diffs.append(took["http"] - took["in_process"])
    return {
        "pairs": len(diffs),
        "errors": len(errors),
        "first_errors": errors[:3],
        "median_diff_ms": metrics.percentile(diffs, 50) if diffs else None,
        "in_process_p50_ms": metrics.percentile(sides["in_process"], 50) if diffs else None,
        "http_p50_ms": metrics.percentile(sides["http"], 50) if diffs else None,
        "diffs": diffs,
    }


def _envelope(eng: Any, questions: list[str], n: int) -> dict[str, Any]:
    """What the envelope costs apart from the search, per question (ms, median): ``to_dict`` on the result,
    then encoding it the CLI's way (``json.dumps``) and the server's (``serve/encode.py``); and its size."""
    from driftgraph import LocalQuery
    from driftgraph.serve import encode

    build, cli, server, size = [], [], [], []
    for i in range(n):
        result = eng.query(LocalQuery(question=questions[i % len(questions)], context_only=True))
        t0 = time.perf_counter()
        doc = result.to_dict()
        t1 = time.perf_counter()
        json.dumps(doc, ensure_ascii=False, default=str)
        t2 = time.perf_counter()
        body = encode.dumps(doc)
        t3 = time.perf_counter()
        build.append((t1 - t0) * 1000)
        cli.append((t2 - t1) * 1000)
        server.append((t3 - t2) * 1000)
        size.append(len(body))
    return {
        "questions": n,
        "to_dict_ms": metrics.percentile(build, 50),
        "json_dumps_ms": metrics.percentile(cli, 50),
        "server_encode_ms": metrics.percentile(server, 50),
        "body_kb": metrics.percentile(size, 50) / 1000,
    }


def _paired_rounds(
    cfg: Any, workdir: Path, uri: str, password: str, questions: list[str], n: int, warmup: int, rounds: int
) -> dict[str, Any]:
    """The paired comparison ``rounds`` times, each against a freshly started server process (new port, new
    warm-up): one run's figure moves by several ms with the server's start and the machine's load, so the
    spread over rounds is what a single figure cannot say. Reported: each round's median difference, their
    median, min and max, and the median over every pair."""
    import httpx2 as httpx

    from driftgraph import LocalQuery, open_engine

    per_round: list[dict[str, Any]] = []
    with open_engine(cfg) as eng, httpx.Client(timeout=330) as client:

        def direct(q: str) -> None:
            eng.query(LocalQuery(question=q, context_only=True))

        for r in range(rounds):
            port = serve_proc.free_port()
            proc = serve_proc.start_server(workdir, uri, password, port)
            url = f"http://127.0.0.1:{port}/v1/query/local"

            def over_http(q: str, url: str = url) -> None:
                res = client.post(url, json={"question": q, "context_only": True})
                if res.status_code != 200:
                    raise RuntimeError(f"HTTP {res.status_code}: {res.text[:200]}")

            try:
                _load(over_http, questions, warmup, 1)
                _load(direct, questions, warmup, 1)
                per_round.append(p := _paired(direct, over_http, questions, n))
            finally:
                serve_proc.stop_server(proc)
            _log(
                f"paired      c=1  round {r + 1}/{rounds}: HTTP - in-process median {p['median_diff_ms']:+.1f} ms "
                f"over {p['pairs']} pairs"
            )
    medians = [p["median_diff_ms"] for p in per_round if p["median_diff_ms"] is not None]
    every = [d for p in per_round for d in p.pop("diffs")]
    return {
        "rounds": per_round,
        "pairs": sum(p["pairs"] for p in per_round),
        "errors": sum(p["errors"] for p in per_round),
        "round_medians_ms": medians,
        "median_diff_ms": metrics.percentile(medians, 50) if medians else None,
        "min_round_ms": min(medians, default=None),
        "max_round_ms": max(medians, default=None),
        "median_over_all_pairs_ms": metrics.percentile(every, 50) if every else None,
        "in_process_p50_ms": metrics.percentile([p["in_process_p50_ms"] for p in per_round], 50) if medians else None,
        "http_p50_ms": metrics.percentile([p["http_p50_ms"] for p in per_round], 50) if medians else None,
    }


def run(
    uri: str,
    password: str,
    dataset: str,
    levels: list[int],
    n: int,
    warmup: int,
    reimport: bool = True,
    rounds: int = 5,
) -> dict[str, Any]:
    import httpx2 as httpx

    from driftgraph import LocalQuery, open_engine
    from driftgraph.config import load_config

    load_start = " ".join(f"{x:.1f}" for x in os.getloadavg())
    root = data.MUSIQUE if dataset == "musique" else data.DULCE
    import_s = None
    if reimport:
        _log(f"importing {root.name} into {uri}")
        import_s = _import(uri, root)
        _log(f"imported in {import_s:.0f} s")
    questions = _questions(dataset)
    workdir = Path(tempfile.mkdtemp(prefix="bench-serve-"))
    serve_proc.config_yaml(workdir, max(levels))
    env_before = {k: os.environ.get(k) for k in ("NEO4J_URI", "NEO4J_PASSWORD")}
    os.environ.update({"NEO4J_URI": uri, "NEO4J_PASSWORD": password})
    try:
        cfg = load_config(workdir / "driftgraph.yaml")
    finally:
        for k, v in env_before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    results: dict[str, Any] = {"in_process": {}, "http": {}, "http_floor_c1": None}

    with open_engine(cfg) as eng:

        def direct(q: str) -> None:
            eng.query(LocalQuery(question=q, context_only=True))

        _load(direct, questions, warmup, 1)
        for c in levels:
            results["in_process"][str(c)] = r = _load(direct, questions, n, c)
            _log(f"in-process  c={c:<2} p50 {r['p50_ms']:.1f} ms  p95 {r['p95_ms']:.1f} ms  {r['rps']:.1f} req/s")
        results["envelope"] = e = _envelope(eng, questions, min(n, 48))
        _log(
            f"envelope    to_dict {e['to_dict_ms']:.2f} ms  json {e['json_dumps_ms']:.2f} ms  "
            f"server encoder {e['server_encode_ms']:.2f} ms  {e['body_kb']:.0f} KB (medians)"
        )

    port = serve_proc.free_port()
    proc = serve_proc.start_server(workdir, uri, password, port)
    url = f"http://127.0.0.1:{port}/v1/query/local"
    try:
        # the client waits longer than serve.request_timeout_s, so a slow question shows as the server's 504
        with httpx.Client(timeout=330, limits=httpx.Limits(max_connections=max(levels))) as client:

            def over_http(q: str) -> None:
                res = client.post(url, json={"question": q, "context_only": True})
                if res.status_code != 200:
                    raise RuntimeError(f"HTTP {res.status_code}: {res.text[:200]}")

            def floor(_: str) -> None:  # the HTTP round trip alone: auth guard, routing, JSON, no engine
                res = client.get(f"http://127.0.0.1:{port}/v1/models")
                if res.status_code != 200:
                    raise RuntimeError(f"HTTP {res.status_code}")

            results["http_floor_c1"] = _load(floor, questions, 200, 1)
            _log(f"http floor  c=1  p50 {results['http_floor_c1']['p50_ms']:.2f} ms (GET /v1/models)")
            _load(over_http, questions, warmup, 1)
            for c in levels:
                results["http"][str(c)] = r = _load(over_http, questions, n, c)
                _log(f"http        c={c:<2} p50 {r['p50_ms']:.1f} ms  p95 {r['p95_ms']:.1f} ms  {r['rps']:.1f} req/s")
    finally:
        serve_proc.stop_server(proc)
    results["paired_c1"] = _paired_rounds(cfg, workdir, uri, password, questions, n, warmup, rounds)
    results["load"] = " ".join(f"{x:.1f}" for x in os.getloadavg())
    results["load_start"] = load_start
    one = str(levels[0])
    overhead = results["http"][one]["p50_ms"] - results["in_process"][one]["p50_ms"]
    return {
        "data": root.name,
        "import_s": import_s,
        "requests_per_level": n,
        "levels": levels,
        "overhead_p50_ms_at_c1": overhead if levels[0] == 1 else None,
        **results,
    }


def table(res: dict[str, Any]) -> str:
    lines = [
        f"Context-only local search on {res['data']}, {res['requests_per_level']} requests per level",
        "",
        "| concurrency | in-process p50 / p95 ms | HTTP p50 / p95 ms | in-process req/s | HTTP req/s | HTTP errors |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for c in map(str, res["levels"]):
        a, b = res["in_process"][c], res["http"][c]
        lines.append(
            f"| {c} | {a['p50_ms']:.1f} / {a['p95_ms']:.1f} | {b['p50_ms']:.1f} / {b['p95_ms']:.1f} | "
            f"{a['rps']:.1f} | {b['rps']:.1f} | {b['errors']} |"
        )
    if res.get("overhead_p50_ms_at_c1") is not None:
        gap = res["overhead_p50_ms_at_c1"]
        lines += ["", f"HTTP minus in-process at concurrency 1, the levels run one after the other: {gap:+.1f} ms p50"]
    if res.get("paired_c1") and res["paired_c1"].get("median_diff_ms") is not None:
        p = res["paired_c1"]
        rounds = p.get("round_medians_ms") or [p["median_diff_ms"]]
        lines += [
            f"Paired at concurrency 1 ({p['pairs']} questions asked both ways back to back, order alternating, "
            f"in {len(rounds)} rounds each against a freshly started server): HTTP minus in-process "
            f"{p['median_diff_ms']:+.1f} ms, the median of the rounds' medians (rounds: "
            + ", ".join(f"{x:+.1f}" for x in rounds)
            + f" ms; in-process {p['in_process_p50_ms']:.1f} ms p50, HTTP {p['http_p50_ms']:.1f} ms p50)"
        ]
    if res.get("envelope"):
        e = res["envelope"]
        lines += [
            f"Envelope per question (median of {e['questions']}, in-process): to_dict {e['to_dict_ms']:.2f} ms, "
            f"encoding {e['server_encode_ms']:.2f} ms with the server's encoder ({e['json_dumps_ms']:.2f} ms with "
            f"json.dumps, the CLI's), body {e['body_kb']:.0f} KB"
        ]
    if res.get("http_floor_c1"):
        f = res["http_floor_c1"]
        lines += [f"HTTP round trip alone (GET /v1/models, c=1): {f['p50_ms']:.2f} ms p50, {f['p95_ms']:.2f} ms p95"]
    lines += [
        "",
        f"machine load average (1, 5, 15 min) at the start: {res.get('load_start', '?')}, "
        f"at the end: {res.get('load', '?')}",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench serve", description=__doc__.splitlines()[0])
    ap.add_argument("--data", choices=("musique", "operation-dulce"), default="musique")
    ap.add_argument("--concurrency", default="1,4,16", help="levels, comma-separated")
    ap.add_argument("--requests", type=int, default=96, help="requests per level and side")
    ap.add_argument("--warmup", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=5, help="paired rounds at c=1, each against a fresh server")
    ap.add_argument("--neo4j-uri", default=None, help="use this Neo4j (password NEO4J_PASSWORD); WIPES its data")
    ap.add_argument("--neo4j-port", type=int, default=bench_neo4j.DEFAULT_PORT, help="port of the bench's launcher")
    ap.add_argument(
        "--skip-import", action="store_true", help="query the index an earlier run left in --neo4j-uri as it is"
    )
    ap.add_argument("--heap", default="2g")
    ap.add_argument("--page-cache", default="1g")
    a = ap.parse_args(argv)
    levels = [int(x) for x in a.concurrency.split(",")]
    with bench_neo4j.database(a.neo4j_uri, a.neo4j_port, a.heap, a.page_cache, _log) as db:
        res = run(
            db.uri, db.password, a.data, levels, a.requests, a.warmup, reimport=not a.skip_import, rounds=a.rounds
        )
    payload = {
        "machine": machine.describe(),
        "command": "python -m bench serve " + " ".join(sys.argv[2:] if argv is None else argv),
        **res,
    }
    RAW.mkdir(parents=True, exist_ok=True)
    (RAW / "serve.json").write_text(json.dumps(payload, indent=1))
    (RAW.parent / "serve.md").write_text(table(res) + "\n")
    _log(table(res))
    _log(f"-> {RAW / 'serve.json'}")
    return 0
