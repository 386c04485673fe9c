"""Reliability: every query mode, ``index`` and ``import-graphrag`` against an endpoint with injected faults.

``python -m bench reliability`` (needs NEO4J_URI / NEO4J_PASSWORD of a disposable database: it is reset)
imports operation-dulce once, runs the fault x mode matrix (the table in ``tests/support/faults.py``, the cases
of ``tests/test_faults.py``) on the fake server (``llm.max_retries`` 1, no backoff), then the partial faults
(one global batch, one DRIFT step), ``index`` under each fault, kill -9 during ``import-graphrag`` / ``index``
and a re-run, 16 threads on one Engine, and ``load``: ``--clients`` (32) clients for ``--duration`` (60) s against
a real ``driftgraph serve`` process (``bench/run/dg/load.py``). Writes ``bench/results/raw/reliability.json`` and
the "Reliability" and "Load" sections of ``bench/results/latest.md``; ``python -m bench reliability load
--duration 5 --clients 4`` runs the load part alone (``--skip-import``: the database holds operation-dulce).
``python -m bench reliability neo4j_stop`` (with RELIABILITY_NEO4J_DATA_DIR of the launcher instance) stops
Neo4j during a query and restarts it (``tests/test_faults_neo4j.py`` asserts the same on its own launcher).
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench import paths
from bench.report.reliability import MODES, write_section

RAW = paths.RAW / "reliability.json"
DULCE = paths.SHARED / "operation-dulce"


def _neo4j() -> dict[str, str]:
    return {
        "uri": os.environ["NEO4J_URI"],
        "username": os.environ.get("NEO4J_USERNAME", "neo4j"),
        "password": os.environ.get("NEO4J_PASSWORD", "driftgraph"),
        "database": os.environ.get("NEO4J_DATABASE", "neo4j"),
    }


def _reset(neo4j: dict[str, str]) -> None:
    from driftgraph.store.db import Store
    from tests.conftest import make_config

    with Store(make_config(neo4j).neo4j) as store:
        store.run_auto("admin/reset")
        store.run_auto("admin/drop_schema")


def _outcome(out: dict[str, Any]) -> str:
    if out["outcome"] == "error":
        err = out["error"]
        stored = "stored" if out.get("stored") else "not stored"
        return f"error exit, one line ({type(err).__name__}, status {err.status}; retrieval {stored})"
    total = out["total"]
    if total.get("retries"):
        failed = f", {total['failed_calls']} calls failed for good" if total.get("failed_calls") else ""
        return f"retried to success ({total['retries']} retries, {total['http_attempts']} HTTP attempts{failed})"
    return "answered"


def matrix(neo4j: dict[str, str], fake: Any) -> dict[str, dict[str, str]]:
    from tests.support.faults import FAULTS
    from tests.test_faults import run_case

    table: dict[str, dict[str, str]] = {}
    for fault in FAULTS:
        table[fault] = {}
        for mode in MODES:
            t0 = time.perf_counter()
            table[fault][mode] = _outcome(run_case(neo4j, fake, mode, fault)) + f" [{time.perf_counter() - t0:.1f}s]"
            print(f"{fault:>16} {mode:<7} {table[fault][mode]}", flush=True)
    return table


def partial(neo4j: dict[str, str], fake: Any) -> dict[str, str]:
    """One global map batch down; one DRIFT step down."""
    from driftgraph import DriftQuery, GlobalQuery
    from driftgraph.api import open_engine
    from tests.support.drift_fakes import step_query
    from tests.support.global_fake import schema_name
    from tests.test_faults import QUESTION, answer_responder, cfg_for

    out: dict[str, str] = {}
    fake.responder = answer_responder
    fake.set_fault(
        "status:500",
        match=lambda r: schema_name(r) == "key_points" and "----- Report 1 -----" in r["messages"][0]["content"],
    )
    with open_engine(cfg_for(neo4j, fake, global_={"map_cap": 1500})) as eng:
        res = eng.query(GlobalQuery(question=QUESTION, level=1))
    failed = sum(b.status == "failed" for b in res.batches)
    out["global, one map batch 500 always"] = (
        f"answered with {failed} of {len(res.batches)} batches failed (stop_reason {res.stop_reason})"
    )
    fake.set_fault(None)
    with open_engine(cfg_for(neo4j, fake)) as eng:
        base = eng.query(DriftQuery(question=QUESTION))
        victim = next(s.query for s in base.steps if s.depth == 1 and s.status == "done")
        fake.set_fault("status:500", match=lambda r: step_query(r) == victim)
        res = eng.query(DriftQuery(question=QUESTION))
    failed = sum(s.status == "failed" for s in res.steps)
    out["drift, one step 500 always"] = f"answered with {failed} step failed (stop_reason {res.stop_reason})"
    fake.set_fault(None)
    return out


def index_faults(neo4j: dict[str, str], fake: Any) -> dict[str, str]:
    from driftgraph.api import Engine
    from driftgraph.errors import LLMError
    from tests.support.faults import EXAMPLES, INDEX_FAULTS, Fault
    from tests.support.index_responder import responder
    from tests.test_faults_index import _cfg

    out: dict[str, str] = {}
    for name, fault in {**INDEX_FAULTS, "429_every_3rd": Fault("every_nth_429:3", None, "recovers")}.items():
        _reset(neo4j)
        fake.responder = responder
        fault.inject(fake)
        with tempfile.TemporaryDirectory() as tmp:
            cfg = _cfg(neo4j, fake, Path(tmp), fault)
            t0 = time.perf_counter()
            try:
                with Engine(cfg) as eng:
                    s = eng.index(EXAMPLES).to_dict()
                total = s["llm"]["total"]
                out[name] = f"complete, exit 0 ({total['retries']} retries, {s['failures']['count']} failures)"
            except LLMError as err:
                out[name] = f"error exit 1, one line ({type(err).__name__}, status {err.status})"
            out[name] += f" [{time.perf_counter() - t0:.1f}s]"
        print(f"index {name:>16} {out[name]}", flush=True)
    fake.set_fault(None)
    return out


def import_faults(neo4j: dict[str, str], fake: Any) -> str:
    from driftgraph.api import Engine
    from tests.conftest import make_config

    fake.set_fault("status:401")
    before = len(fake.chat_requests())
    with Engine(make_config(neo4j, llm={"base_url": fake.base_url, "api_key": "t"})) as eng:
        eng.import_graphrag(DULCE, reset=True, embed=True)
    chat = len(fake.chat_requests()) - before
    fake.set_fault(None)
    return f"complete under every chat fault: the importer made {chat} chat calls"


def _counts(neo4j: dict[str, str]) -> dict[str, int]:
    from driftgraph.store.db import Store
    from tests.conftest import make_config

    with Store(make_config(neo4j).neo4j) as store:
        row = store.read("admin/counts")[0]
        dup = store.read("admin/duplicate_ids")[0]["duplicates"]
    out = {k: int(v) for k, v in row.items() if k != "retrievals"}
    out["duplicate_ids"] = int(dup)
    return out


def _kill_and_rerun(neo4j: dict[str, str], fake: Any, args: list[str], cwd: Path, after_s: float) -> dict[str, Any]:
    from tests.support.cli import run_cli

    _reset(neo4j)
    env = {**os.environ, "NEO4J_URI": neo4j["uri"], "NEO4J_PASSWORD": neo4j["password"]}
    env |= {"OPENAI_BASE_URL": fake.base_url, "OPENAI_API_KEY": "t"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "driftgraph", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(after_s)
    killed = proc.poll() is None
    if killed:
        proc.send_signal(signal.SIGKILL)
    proc.wait()
    partial_counts = _counts(neo4j)
    rerun = run_cli(args, neo4j, fake, cwd)
    after = _counts(neo4j)
    _reset(neo4j)
    clean = run_cli(args, neo4j, fake, cwd)
    reference = _counts(neo4j)
    return {
        "killed_after_s": after_s if killed else None,
        "at_kill": partial_counts,
        "rerun_exit": rerun.returncode,
        "after_rerun": after,
        "clean_run_exit": clean.returncode,
        "clean_run": reference,
        "identical": after == reference,
    }


def kills(neo4j: dict[str, str], fake: Any) -> dict[str, Any]:
    from tests.support.faults import EXAMPLES, INDEX
    from tests.support.index_responder import responder

    fake.responder = responder
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "driftgraph.yaml").write_text(json.dumps({"index": {**INDEX, "cache_dir": str(work / "cache")}}))
        docs = work / "docs"
        shutil.copytree(EXAMPLES, docs)
        out = {"import-graphrag": _kill_and_rerun(neo4j, fake, ["import-graphrag", str(DULCE)], work, 6.0)}
        shutil.rmtree(work / "cache", ignore_errors=True)
        out["index"] = _kill_and_rerun(neo4j, fake, ["index", str(docs), "--allow-failures"], work, 8.0)
    return out


def threads16(neo4j: dict[str, str], fake: Any) -> dict[str, Any]:
    from driftgraph import BasicQuery, LocalQuery
    from driftgraph.api import Engine, open_engine
    from tests.conftest import make_config
    from tests.test_faults import QUESTION, answer_responder, cfg_for

    _reset(neo4j)
    with Engine(make_config(neo4j)) as eng:
        eng.import_graphrag(DULCE, reset=True, embed=True)
    fake.responder = answer_responder
    results: dict[int, Any] = {}
    errors: list[str] = []
    t0 = time.perf_counter()
    with open_engine(cfg_for(neo4j, fake)) as eng:

        def ask(i: int) -> None:
            try:
                results[i] = eng.query((LocalQuery if i % 2 else BasicQuery)(question=f"{QUESTION} ({i})"))
            except Exception as err:
                errors.append(f"{type(err).__name__}: {err}")

        ts = [threading.Thread(target=ask, args=(i,)) for i in range(16)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        stored = {i: eng.retrieval(r.retrieval_id)["retrieval"] for i, r in results.items()}
    return {
        "queries": 16,
        "errors": errors,
        "stored_retrievals": len({r.retrieval_id for r in results.values()}),
        "ledgers_own": all(r.cost.llm_calls == 1 and stored[i]["cost"]["llm_calls"] == 1 for i, r in results.items()),
        "seconds": round(time.perf_counter() - t0, 2),
    }


def neo4j_stop(neo4j: dict[str, str], fake: Any) -> dict[str, Any]:
    """Stop the launcher's Neo4j while a CLI query waits on the LLM, then start it and query again.

    Needs the launcher instance of NEO4J_URI: RELIABILITY_NEO4J_DATA_DIR (and the port from the URI)."""
    from driftgraph.api import Engine
    from tests.conftest import make_config
    from tests.test_faults import QUESTION, answer_responder

    data_dir = os.environ["RELIABILITY_NEO4J_DATA_DIR"]
    port = neo4j["uri"].rsplit(":", 1)[1]
    _reset(neo4j)
    with Engine(make_config(neo4j)) as eng:
        eng.import_graphrag(DULCE, reset=True, embed=True)
    env = {**os.environ, "NEO4J_URI": neo4j["uri"], "NEO4J_PASSWORD": neo4j["password"]}
    env |= {"OPENAI_BASE_URL": fake.base_url, "OPENAI_API_KEY": "t"}
    dg = [sys.executable, "-m", "driftgraph"]
    launcher = ["neo4j", "--port", port, "--data-dir", data_dir]
    fake.responder, fake.delay = answer_responder, (lambda req: 8.0)
    fake.set_fault(None)
    before = len(fake.chat_requests())
    query = subprocess.Popen([*dg, "query", "basic", QUESTION], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)  # fmt: skip
    while len(fake.chat_requests()) == before:
        time.sleep(0.1)
    subprocess.run([*dg, launcher[0], "stop", *launcher[1:]], env=env, capture_output=True)
    _, err = query.communicate()
    started = subprocess.run([*dg, launcher[0], "start", *launcher[1:]], env=env, capture_output=True, text=True)
    fake.delay = lambda req: 0.0
    again = subprocess.run([*dg, "query", "basic", QUESTION], env=env, capture_output=True, text=True)
    return {
        "during_exit": query.returncode,
        "during_stderr": err.strip(),
        "restart_exit": started.returncode,
        "after_exit": again.returncode,
        "after_answered": bool(again.stdout.strip()),
    }


def main(argv: list[str] | None = None) -> None:
    """Which groups to run (default all but neo4j_stop), and the load part's options."""
    import argparse

    from bench.run.dg import load

    groups = ("matrix", "partial", "index", "kills", "threads", "load", "neo4j_stop")
    ap = argparse.ArgumentParser(prog="python -m bench reliability", description=__doc__.splitlines()[0])
    ap.add_argument("parts", nargs="*", metavar="PART", help=f"any of {', '.join(groups)}")
    ap.add_argument("--duration", type=float, default=60.0, help="load: seconds of load (default 60)")
    ap.add_argument("--clients", type=int, default=32, help="load: concurrent clients (default 32)")
    ap.add_argument("--skip-import", action="store_true", help="load: the database already holds operation-dulce")
    a = ap.parse_args(argv)
    if set(a.parts) - set(groups):
        ap.error(f"unknown part(s) {sorted(set(a.parts) - set(groups))}: any of {', '.join(groups)}")
    parts = a.parts or [g for g in groups if g != "neo4j_stop"]
    from driftgraph.api import Engine
    from tests.conftest import make_config
    from tests.support.fake_openai import FakeOpenAI

    neo4j = _neo4j()
    fake = FakeOpenAI().start()
    data: dict[str, Any] = json.loads(RAW.read_text()) if RAW.is_file() else {}
    if set(parts) - {"load"}:  # the load part records its own machine and date
        data.update(date=datetime.now(UTC).strftime("%Y-%m-%d"), machine=f"{platform.machine()} {os.cpu_count()} cores")
    try:
        if "matrix" in parts or "partial" in parts:
            _reset(neo4j)
            with Engine(make_config(neo4j)) as eng:
                eng.import_graphrag(DULCE, reset=True, embed=True)
        if "matrix" in parts:
            data["matrix"] = matrix(neo4j, fake)
        if "partial" in parts:
            data["partial"] = partial(neo4j, fake)
        if "index" in parts:
            data["index"] = index_faults(neo4j, fake)
            data["import"] = import_faults(neo4j, fake)
        if "kills" in parts:
            data["kills"] = kills(neo4j, fake)
        if "neo4j_stop" in parts:
            data["neo4j_stop"] = neo4j_stop(neo4j, fake)
        if "threads" in parts:
            data["threads16"] = threads16(neo4j, fake)
        if "load" in parts:
            if not a.skip_import and "threads" not in parts:  # threads16 leaves operation-dulce imported
                _reset(neo4j)
                with Engine(make_config(neo4j)) as eng:
                    eng.import_graphrag(DULCE, reset=True, embed=True)
            facts = load.machine_facts(sys.argv[2:] if argv is None else argv)
            with tempfile.TemporaryDirectory(prefix="bench-load-") as tmp:
                data["load"] = {"machine": facts, **load.run(neo4j, a.duration, a.clients, Path(tmp))}
            print(json.dumps({k: data["load"][k] for k in ("requests", "by_status", "lost")}), flush=True)
    finally:
        fake.stop()
        RAW.parent.mkdir(parents=True, exist_ok=True)
        RAW.write_text(json.dumps(data, indent=2, default=str) + "\n")
    if "matrix" in data and set(parts) - {"load"}:
        write_section(data)
    if "load" in data:
        load.write_section(data["load"], paths.LATEST)
