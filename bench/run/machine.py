"""A description of the machine and software a result was measured on (goes at the top of every table)."""

from __future__ import annotations

import datetime as dt
import os
import platform
import subprocess
from pathlib import Path

from bench.paths import ROOT


def _cpu() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def _ram_gb() -> float:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) / 1024 / 1024
    except OSError:
        pass
    return float("nan")


def _git() -> str:
    try:
        rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "driftgraph", "cypher", "prompts"],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        return rev.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except OSError:
        return "unknown"


def describe() -> dict[str, str]:
    return {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": f"{_cpu()}, {os.cpu_count()} logical cores",
        "ram": f"{_ram_gb():.0f} GB",
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "driftgraph": _git(),
        "load": " ".join(f"{x:.1f}" for x in os.getloadavg()),
    }
