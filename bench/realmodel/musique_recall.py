"""``python -m bench real-model-musique recall``: evidence recall of every retriever on the real-model index, beside
the triples-built index cut to the same passages (issue 37, item 7).

Both indexes hold the same 216 passages and answer the same 50 dev questions, so the difference per question is
what the index costs: the real 1.5B model's extraction against GPT-3.5's published triples. Each index is
imported into one Neo4j in turn (reset first) and measured by the workers the ``quality`` part uses, at the
same budgets: driftgraph local and basic (``dg-basic``), GraphRAG 3.2.0's local context builder in its own
virtualenv (``gr-local``, both entity stores) and vector-only chunks (``vector_only``). Evidence recall is
text-based (a gold passage's text whole in the context), and both indexes keep each passage's text unchanged,
so the two sides score against the same gold texts.

The loss is paired by question id: triples-cut recall minus real-model recall, with its bootstrap interval.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from bench import metrics
from bench.paths import CACHE
from bench.run import data, env, vector_only

WORK = CACHE / "runs"
BUDGETS = (1000, 2000, 4000, 8000)  # the 216 passages hold ~24k tokens: 12k would hold half the haystack
LOCAL = "driftgraph local"
GRAPHRAG = "GraphRAG 3.2.0 local"
GRAPHRAG_COMMUNITY = "GraphRAG 3.2.0 local, community-entity store"
SYSTEMS = (LOCAL, "driftgraph basic", "vector-only chunks", GRAPHRAG, GRAPHRAG_COMMUNITY)


def measure(name: str, root: Path, uri: str, budgets: tuple[int, ...], log) -> dict[str, Any]:
    """Import ``root`` into ``uri`` (its data replaced) and measure every system on its dev questions."""
    qfile = data.require(root / "questions_dev.jsonl")
    common = ["--root", str(root), "--questions", str(qfile), "--budgets", ",".join(map(str, budgets))]
    log(f"{name}: importing {root}")
    imported = env.run_driftgraph("imports", ["--uri", uri, "--root", str(root)], WORK / f"rm_{name}_import.json", log)
    log(f"{name}: driftgraph local and basic")
    ours = env.run_driftgraph("dg-basic", ["--uri", uri, *common], WORK / f"rm_{name}_dg.json", log)
    log(f"{name}: GraphRAG 3.2.0 local")
    theirs = env.run_baseline("gr-local", [*common, "--reps", "0"], WORK / f"rm_{name}_gr.json", log)
    log(f"{name}: vector-only chunks")
    systems = {
        LOCAL: ours["systems"][LOCAL],
        "driftgraph basic": ours["systems"]["driftgraph basic"],
        "vector-only chunks": vector_only.with_offline_embedder(data.questions(qfile), data.text_units(root), budgets),
        GRAPHRAG: theirs["quality"],
        GRAPHRAG_COMMUNITY: theirs["quality_community_store"],
    }
    return {"root": str(root), "counts": imported["counts"], "systems": systems}


def loss(real: dict[str, Any], cut: dict[str, Any], budgets: tuple[int, ...]) -> dict[str, dict[str, Any]]:
    """Per system and budget: each side's mean recall with its interval, and the cut's recall minus the real
    index's, paired on the questions both sides answered (``n``). A system one side lacks has no row."""
    out: dict[str, dict[str, Any]] = {}
    for system in SYSTEMS:
        if system not in real["systems"] or system not in cut["systems"]:
            continue
        rows: dict[str, Any] = {}
        for b in map(str, budgets):
            r = {row["id"]: row["recall"] for row in real["systems"][system].get(b, [])}
            c = {row["id"]: row["recall"] for row in cut["systems"][system].get(b, [])}
            both = sorted(set(r) & set(c))
            if not both:
                continue
            rv, cv = [r[i] for i in both], [c[i] for i in both]
            rows[b] = {
                "n": len(both),
                "real": metrics.mean(rv),
                "real_ci": metrics.bootstrap_ci(rv),
                "cut": metrics.mean(cv),
                "cut_ci": metrics.bootstrap_ci(cv),
                "loss": metrics.paired(cv, rv),
            }
        out[system] = rows
    return out


def table(payload: dict[str, Any]) -> str:
    """The raw file as a markdown table: per system and budget, cut -> real-model recall and the paired loss."""
    lines = [
        "| system | budget | triples cut | real 1.5B model | loss (cut - real), 95% CI | n |",
        "|---|---:|---|---|---|---:|",
    ]
    for system, rows in payload["loss"].items():
        for b, row in rows.items():
            p = row["loss"]
            star = " *" if p["significant"] else ""
            lines.append(
                f"| {system} | {int(b):,} | {row['cut']:.3f} | {row['real']:.3f} | "
                f"{p['diff']:+.3f} [{p['lo']:+.2f}, {p['hi']:+.2f}]{star} | {row['n']} |"
            )
    lines.append("")
    lines.append("`*`: the 95% paired bootstrap interval excludes 0.")
    return "\n".join(lines)


def run(real_root: Path, cut_root: Path, uri: str, password: str, budgets: tuple[int, ...], log) -> dict[str, Any]:
    os.environ["NEO4J_PASSWORD"] = password  # the workers read it
    real = measure("real", real_root, uri, budgets, log)
    cut = measure("cut", cut_root, uri, budgets, log)
    return {"budgets": list(budgets), "indexes": {"real": real, "cut": cut}, "loss": loss(real, cut, budgets)}
