"""The "Reliability" section of latest.md, from ``raw/reliability.json``
(written by ``python -m bench reliability``)."""

from __future__ import annotations

import re
from typing import Any

from bench.paths import LATEST

MODES = ("local", "basic", "global", "drift")


def section(d: dict[str, Any]) -> list[str]:
    """The markdown "Reliability" section of latest.md."""
    lines = [
        "## 7. Reliability: faults injected by the fake OpenAI server",
        "",
        f"{d['machine']}, {d['date']}; `python -m bench.reliability` (llm.max_retries 1, backoff 0, timeout 0.4 s). "
        "Fatal = 401/403/404 (not retried); down = still failing after the retry; the others fail once or every "
        "Nth request and are retried. Every error is one line on stderr with exit 1; the question is stored "
        "with `stop_reason: error`.",
        "",
        "| fault | " + " | ".join(MODES) + " |",
        "|---|" + "---|" * len(MODES),
    ]
    for fault, row in d["matrix"].items():
        lines.append(f"| {fault} | " + " | ".join(row[m] for m in MODES) + " |")
    lines += ["", "| partial fault | outcome |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in d.get("partial", {}).items()]
    if d.get("index"):
        lines += ["", "| `index` under | outcome |", "|---|---|"]
        lines += [f"| {k} | {v} |" for k, v in d["index"].items()]
    if d.get("import"):
        lines += ["", f"`import-graphrag`: {d['import']}."]
    for name, k in (d.get("kills") or {}).items():
        lines += [
            "",
            f"kill -9 during `{name}` after {k['killed_after_s']} s, then a re-run (exit {k['rerun_exit']}): "
            f"counts {k['after_rerun']} vs a clean run {k['clean_run']}: "
            f"{'identical' if k['identical'] else 'DIFFERENT'}.",
        ]
    stop = d.get("neo4j_stop")
    if stop:
        lines += [
            "",
            f"Neo4j stopped while `query basic` waited on the model: exit {stop['during_exit']}, "
            f"{len(stop['during_stderr'].splitlines())} line on stderr (`{stop['during_stderr'][:90]}...`); after "
            f"`neo4j start` the next query exits {stop['after_exit']} with an answer.",
        ]
    t = d.get("threads16")
    if t:
        lines += [
            "",
            f"16 threads on one Engine (local and basic, answered): {len(t['errors'])} errors, "
            f"{t['stored_retrievals']} stored retrievals, ledgers {'kept apart' if t['ledgers_own'] else 'MIXED'}, "
            f"{t['seconds']} s.",
        ]
    return lines + [""]


def write_section(d: dict[str, Any]) -> None:
    """Replace (or append) the Reliability section of latest.md, leaving the other sections as they are."""
    text = LATEST.read_text(encoding="utf-8")
    block = "\n".join(section(d))
    pattern = re.compile(r"^## 7\. Reliability.*?(?=^## |\Z)", re.S | re.M)
    text = pattern.sub(block, text) if pattern.search(text) else text.rstrip() + "\n\n" + block
    LATEST.write_text(text.rstrip() + "\n", encoding="utf-8")
