"""DRIFT at a matched call budget: GraphRAG 3.2.0 and driftgraph with the same fake model, the same questions
and the same number of chat calls allowed (issue 39, item 3).

python -m bench drift-matched        # prints the table docs/benchmarks.md carries

Reads ``results/raw/drift_matched_{graphrag,driftgraph}_<calls>.json``, written by ``gr-llm-cost --mode drift
--n-depth D --k-followups K`` and ``drift-cost --max-llm-calls N`` in the ``worst`` scenario: every answer
proposes follow-ups drawn from three layers of ten distinct questions (no near-twins), and the score keeps
rising, so neither system stops early. Per system and budget: chat calls made, follow-up questions answered and
how many were distinct, the deepest layer reached, cl100k prompt tokens, and how much two runs of the same
question share (Jaccard of the answered follow-ups).
"""

from __future__ import annotations

import itertools
import json
import re
from collections import defaultdict
from typing import Any

from bench import metrics, paths

FILE = re.compile(r"drift_matched_(graphrag|driftgraph)_(\d+)\.json$")


def _runs() -> dict[int, dict[str, dict[str, Any]]]:
    out: dict[int, dict[str, dict[str, Any]]] = defaultdict(dict)
    for path in sorted(paths.RAW.glob("drift_matched_*.json")):
        m = FILE.search(path.name)
        if m:
            out[int(m.group(2))][m.group(1)] = json.loads(path.read_text(encoding="utf-8"))
    return dict(out)


def _overlap(rows: list[dict[str, Any]]) -> float | None:
    """Mean Jaccard of the answered follow-ups between runs of the same question (None with one run each)."""
    by_q: dict[str, list[set[str]]] = defaultdict(list)
    for r in rows:
        by_q[r["question"]].append(set(r["step_questions"]))
    pairs = [
        len(a & b) / len(a | b) if a | b else 1.0 for sets in by_q.values() for a, b in itertools.combinations(sets, 2)
    ]
    return metrics.mean(pairs) if pairs else None


def summary(rows: list[dict[str, Any]], tokens_key: str) -> dict[str, Any]:
    rows = [r for r in rows if r["scenario"] == "worst"]
    return {
        "runs": len(rows),
        "calls": metrics.mean(r["chat_calls"] for r in rows),
        "max_calls": max(r["chat_calls"] for r in rows),
        "answered": metrics.mean(len(r["step_questions"]) for r in rows),
        "distinct": metrics.mean(len(set(r["step_questions"])) for r in rows),
        "deepest": metrics.mean(max((x for x in r["step_layers"] if x is not None), default=-1) + 1 for r in rows),
        "prompt_tokens": metrics.mean(r[tokens_key] for r in rows),
        "overlap": _overlap(rows),
    }


def table() -> str:
    lines = [
        "| call budget | system (setting) | chat calls, mean (max) | follow-ups answered (distinct) | deepest "
        "layer | prompt tokens (cl100k) | two runs share |",
        "|---|---|---|---|---|---|---|",
    ]
    for budget, systems in sorted(_runs().items()):
        for name in ("graphrag", "driftgraph"):
            raw = systems.get(name)
            if raw is None:
                continue
            if name == "graphrag":
                s = summary(raw["rows"], "prompt_tokens")
                setting = ", ".join(f"{k} {v}" for k, v in raw["drift_search"].items()) or "defaults"
                label = f"GraphRAG 3.2.0 ({setting})"
            else:
                s = summary(raw["rows"], "prompt_tokens_cl100k")
                label = f"driftgraph (max_llm_calls {raw['drift']['max_llm_calls']}, seed {raw['seed']})"
            share = "-" if s["overlap"] is None else f"{s['overlap']:.0%}"
            lines.append(
                f"| {budget} | {label} | {s['calls']:.1f} ({s['max_calls']}) | {s['answered']:.1f} "
                f"({s['distinct']:.1f}) | {s['deepest']:.1f} | {s['prompt_tokens']:,.0f} | {share} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    print(table())
    return 0
