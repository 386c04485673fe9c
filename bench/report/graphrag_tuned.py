"""GraphRAG 3.2.0 at its defaults and tuned (``bench gr-tune``) beside driftgraph local and vector-only, per
question set and budget, with paired intervals (issue 39, item 2).

python -m bench graphrag-tuned            # prints the markdown tables that docs/benchmarks.md carries

driftgraph and vector-only come from the ``quality`` run for dev (the README's table) and from the
``local-recall`` runs of the held-out sets (``chunk_rank_<set>.json``; ``local.chunk_rank`` does not move
budgeted recall); GraphRAG from
``graphrag_tuned_local[_<set>].json`` and ``graphrag_tuned_basic.json``. Questions are paired by id.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from bench import metrics, paths

SETS = {
    "dev": "", "seed 2": "_seed2", "seed 3": "_seed3", "seed 4": "_seed4", "worded": "_worded",
    "worded seed 4": "_worded_seed4",
}  # fmt: skip
RANK_FILE = {label: suffix.lstrip("_") or "dev" for label, suffix in SETS.items()}


def _load(name: str) -> dict[str, Any] | None:
    path = paths.RAW / name
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def _by_id(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in rows}


def _ours(label: str) -> dict[str, dict[str, dict[str, dict[str, Any]]]]:
    """``{system: {budget: {question id: row}}}`` for driftgraph local and vector-only on one set: dev from the
    ``quality`` run (the README's table), the other sets from their ``local-recall`` runs."""
    if label == "dev":
        raw = (_load("quality.json") or {"systems": {}})["systems"]
        pairs = (("driftgraph local", "driftgraph local"), ("vector-only", "vector-only chunks"))
        return {ours: {b: _by_id(r) for b, r in raw.get(theirs, {}).items()} for ours, theirs in pairs}
    rank = (_load(f"chunk_rank_{RANK_FILE[label]}.json") or {"systems": {}})["systems"]
    pairs = (("driftgraph local", "graph"), ("vector-only", "vector-only chunks"))
    return {ours: {b: _by_id(r) for b, r in rank.get(theirs, {}).get("rows", {}).items()} for ours, theirs in pairs}


Rows = dict[str, dict[str, Any]]


def _graphrag(kind: str) -> Iterator[tuple[str, str, Rows, Rows]]:
    """(set, budget, GraphRAG's default rows, its tuned rows) for ``kind`` local or basic, every set run."""
    for label, suffix in SETS.items():
        gr = _load(f"graphrag_tuned_{kind}{suffix}.json")
        if gr is None:
            continue
        tuned_name = gr["tuned"]["name"] if "cv" in gr else "tuned"  # a sweep names its choice; a --chosen run: tuned
        for budget in map(str, gr["budgets"]):
            yield (
                label,
                budget,
                _by_id(gr["configs"]["defaults"]["rows"][budget]),
                _by_id(gr["configs"][tuned_name]["rows"][budget]),
            )


def _recall(rows: Rows, ids: Iterable[str] | None = None) -> str:
    picked = [rows[i] for i in (rows if ids is None else ids) if i in rows]
    return f"{metrics.mean(r['recall'] for r in picked):.3f}" if picked else "-"


def _gap(ours: Rows, tuned: Rows, counts: bool) -> str:
    """driftgraph minus tuned GraphRAG on the questions both answered, with its paired interval."""
    ids = [i for i in tuned if i in ours]
    if not ids:
        return "-"
    p = metrics.paired([ours[i]["recall"] for i in ids], [tuned[i]["recall"] for i in ids])
    tail = f", {p['wins']} won / {p['losses']} lost" if counts else ""
    return f"{p['diff']:+.3f} [{p['lo']:+.3f}, {p['hi']:+.3f}]{tail}"


def _row(label: str, budget: str, cells: list[str], n: int) -> str:
    return f"| {label} ({n}) | {int(budget):,} | " + " | ".join(cells) + " |"


def _tuned(tuned: Rows) -> str:
    return f"{_recall(tuned)} ({metrics.mean(r['tokens'] for r in tuned.values()):,.0f})"


def local_table() -> str:
    lines = [
        "| set | budget | GraphRAG default | GraphRAG tuned (tokens filled) | driftgraph local | vector-only | "
        "driftgraph - tuned GraphRAG, paired |",
        "|---|---|---|---|---|---|---|",
    ]
    ours_of = {label: _ours(label) for label in SETS}
    for label, budget, default, tuned in _graphrag("local"):
        dg = ours_of[label]["driftgraph local"].get(budget, {})
        vec = ours_of[label]["vector-only"].get(budget, {})
        cells = [_recall(default), _tuned(tuned), _recall(dg, tuned), _recall(vec, tuned), _gap(dg, tuned, True)]
        lines.append(_row(label, budget, cells, len(tuned)))
    return "\n".join(lines)


def basic_table() -> str:
    """Basic search on each set: GraphRAG's default k and its tuned k (CSV quoting undone, as gr-basic's
    ``recall_unquoted``), and on dev driftgraph basic (``basic_baseline.json``) paired with the tuned one."""
    ours = (_load("basic_baseline.json") or {}).get("driftgraph", {}).get("systems", {}).get("driftgraph basic", {})
    lines = [
        "| set | budget | GraphRAG default k | GraphRAG tuned k (tokens filled) | driftgraph basic | "
        "driftgraph - tuned GraphRAG, paired |",
        "|---|---|---|---|---|---|",
    ]
    for label, budget, default, tuned in _graphrag("basic"):
        dg = _by_id(ours.get(budget, [])) if label == "dev" else {}
        cells = [_recall(default), _tuned(tuned), _recall(dg, tuned), _gap(dg, tuned, False)]
        lines.append(_row(label, budget, cells, len(tuned)))
    return "\n".join(lines)


def cv_line(name: str) -> str:
    gr = _load(name)
    if gr is None or "cv" not in gr:
        return ""
    cv = gr["cv"]
    chosen = sorted({f["chosen"] for f in cv["folds"]})
    return (
        f"{name}: {len(gr['configs'])} configurations; held-out score {cv['held_out']:.3f} (fold spread "
        f"{cv['min']:.3f}-{cv['max']:.3f}); folds chose {chosen}; tuned on all dev: {gr['tuned']['name']} "
        f"(score {gr['tuned']['score']:.3f})"
    )


def main(argv: list[str] | None = None) -> int:
    print(local_table())
    print()
    print(basic_table())
    print()
    for name in ("graphrag_tuned_local.json", "graphrag_tuned_basic.json"):
        print(cv_line(name))
    return 0
