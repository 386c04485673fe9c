"""Cell formats shared by the sections of latest.md: a raw file, a number, median [min–max], the machine line."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from bench.metrics import percentile, spread

DG, GR, GRC, VO = (
    "driftgraph local",
    "GraphRAG 3.2.0 local",
    "GraphRAG 3.2.0 local, community-entity store",
    "vector-only chunks",
)


def load(raw: Path, name: str) -> dict | None:
    p = raw / f"{name}.json"
    return json.loads(p.read_text()) if p.is_file() else None


def f(x: float | None, nd: int = 0) -> str:
    if x is None:
        return "–"
    return f"{x:,.{nd}f}"


def sp(values: Sequence[float], nd: int = 1) -> str:
    """median [min–max] of repeated runs."""
    s = spread(values)
    if s["n"] == 1:
        return f(s["median"], nd)
    return f"{f(s['median'], nd)} [{f(s['min'], nd)}–{f(s['max'], nd)}]"


def per_rep(reps: list[list[float]], p: float) -> list[float]:
    return [percentile(r, p) for r in reps if r]


def ratio(a: list[list[float]], b: list[list[float]], p: float) -> str:
    return sp([x / y for x, y in zip(per_rep(a, p), per_rep(b, p), strict=True)], 2)


def machine_line(d: dict) -> str:
    m = d["machine"]
    return (
        f"{m['date']} · {m['cpu']} · {m['ram']} RAM · {m['os']} · Python {m['python']} · "
        f"driftgraph {m['driftgraph']} · load avg at end {m['load']} · `{d.get('command', '')}`"
    )
