"""Render ``results/raw/*.json`` into ``results/latest.md`` (``python -m bench report``), then the PNG plots in
the baseline virtualenv when it exists (``python -m bench plots``, which needs matplotlib)."""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

from bench import paths
from bench.report import bulk, incremental, real_model, reliability, routes, sections, stats, synth
from bench.report import load as load_section
from bench.report.fmt import load


def write(raw: Path, target: Path) -> None:
    parts: list[str] = [
        "# driftgraph benchmarks: latest results",
        "",
        "Produced by `python -m bench all` (each part alone: `python -m bench quality|speed|scale|drift|global|"
        "embedder`); every section names the machine, date and command of its own run. Raw numbers: "
        "`bench/results/raw/*.json`; plots: `recall_vs_budget.png`, `latency_vs_size.png`, `memory_vs_size.png`.",
        "",
    ]
    q = load(raw, "quality")
    if q:
        parts += sections.quality(q)
        parts += stats.section(q, load(raw, "cv"))
    wording = {  # how each set was worded, where it is not the generator's mechanical wording
        "synth_questions_worded": "the seed-2 and seed-3 chains that read as a question, worded in plain English by a"
        " reader (a model agent that saw the chain and its passages, never the retriever); the 240 others rejected"
        " with a reason each (`musique_synth_seed2_rejected.jsonl`, `musique_synth_seed3_rejected.jsonl`)"
    }
    for name, note in (
        ("synth_questions", "seed 0: the walk's settings were chosen looking at it"),
        ("synth_questions_seed1", "seed 1, other chains: held out for the walk, looked at for ppr.known_relations"),
        ("synth_questions_seed2", "seed 2, chains of neither: held out from every choice"),
        (
            "synth_questions_seed3",
            "seed 3, named bridges only (`--coherent`), 3 and 4 hops: held out from every choice",
        ),
        ("synth_questions_worded", "worded by a reader: held out from every choice"),
    ):
        syn = load(raw, name)
        if syn:
            parts += synth.section(syn, note, wording.get(name, synth.MECHANICAL))
    local, speed = load(raw, "speed_local"), load(raw, "speed")
    if local or speed:
        parts += sections.speed(local, speed, None)
    later = (
        ("scale", sections.scale),
        ("drift", sections.drift),
        ("global", sections.global_),
        ("embedder", sections.embedder),
        ("routes", routes.routes),
        ("basic_baseline", routes.basic_baseline),
        ("speed_product", routes.product_path),
    )
    for name, fn in later:
        d = load(raw, name)
        if d:
            parts += fn(d)
    rel = load(raw, "reliability")
    if rel and rel.get("matrix"):
        parts += reliability.section(rel)
    if rel and rel.get("load"):
        parts += load_section.section(rel["load"])
    for weights in ("0.5b", "1.5b"):
        d = load(raw, f"real_model_{weights}")
        if d:
            parts += real_model.section(d)
    for name, fn in (("hnsw", bulk.hnsw), ("java", bulk.java), ("index_incremental", incremental.section)):
        d = load(raw, name)
        if d:
            parts += fn(d)
    target.write_text("\n".join(parts).rstrip() + "\n")


def render(raw: Path = paths.RAW, results: Path = paths.RESULTS) -> None:
    """latest.md from the raw files, then the plots when the baseline virtualenv (matplotlib) is there."""
    write(raw, results / "latest.md")
    if paths.venv_python().is_file():
        cmd = [str(paths.venv_python()), "-m", "bench", "plots", str(raw), str(results)]
        subprocess.run(cmd, check=True, cwd=paths.ROOT, env=paths.child_env())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench report", description=__doc__.splitlines()[0])
    ap.add_argument("--raw", type=Path, default=paths.RAW, help="folder of raw result files")
    ap.add_argument("--results", type=Path, default=paths.RESULTS, help="where latest.md and the plots go")
    a = ap.parse_args(argv)
    render(a.raw, a.results)
    print(f"-> {a.results / 'latest.md'}", flush=True)
    return 0
