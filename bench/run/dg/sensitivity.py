"""How flat local search's evidence recall is around each default (MuSiQue dev split).

python -m bench sensitivity --uri bolt://... --out X.json [--keys a,b.c] [--factors 0.5,0.75,1.33,2]
python -m bench sensitivity --table X.json   # the markdown table of a finished run

Each key of ``local`` (dotted below it: ``ppr.damping``) is scaled by each factor, one key at a time, the rest
at their defaults; integers are rounded, values the model refuses are reported as refused. For every variant:
recall at each budget and the paired difference against the defaults on the same questions (bootstrap
interval, wins/losses). A default whose neighbours all score the same was not picked for these 50 questions;
one that sits on a peak was, and is the first suspect when unseen questions score lower. Cross-validation
(``bench.run.dg.cv``) chooses among whole configurations; this says which single constants the choice hangs on.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from bench import metrics
from bench.run import data, machine
from bench.run.dg import common

BUDGETS = (2000, 4000, 8000)
FACTORS = (0.5, 0.75, 1.33, 2.0)
KEYS = (
    "min_similarity",
    "relative_similarity",
    "chunk_min_similarity",
    "chunk_top_k",
    "entity_top_k",
    "seed_chunks",
    "seed_hop_weight",
    "entity_hop_weight",
    "entity_chunks",
    "hop_max_chunks_per_entity",
    "bridge_frontier",
    "bridge_chunks_per_entity",
    "bridge_weight",
    "bridge_max_df",
    "named_rare_chunks",
    "ppr.max_df",
    "ppr.damping",
    "ppr.mass_exponent",
    "ppr.passage_weight",
    "ppr.passage_relative_temperature",
    "ppr.relation_weight",
    "ppr.weight",
)


def scaled(defaults: dict[str, Any], key: str, factor: float) -> tuple[dict[str, Any], Any]:
    """The ``local`` overrides that scale ``key`` by ``factor`` (nested for dotted keys), and the new value."""
    *parents, leaf = key.split(".")
    node = defaults
    for p in parents:
        node = node[p]
    value = node[leaf]
    new: Any = round(value * factor) if isinstance(value, int) and not isinstance(value, bool) else value * factor
    over: dict[str, Any] = {leaf: new}
    for p in reversed(parents):
        over = {p: over}
    return over, new


def table(run: dict[str, Any]) -> str:
    """One row per variant: recall at each budget with the paired difference against the defaults; a
    difference whose 95% interval excludes 0 is starred."""
    budgets = [str(b) for b in run["budgets"]]
    head = " | ".join(f"{int(b):,}" for b in budgets)
    lines = [
        f"Evidence recall, {run['questions']} MuSiQue dev questions, one key scaled at a time "
        f"({run['machine']['date']})",
        "",
        f"| key | value (default) | {head} |",
        "|---|---|" + "---:|" * len(budgets),
        "| defaults | | " + " | ".join(f"{run['defaults'][b]:.3f}" for b in budgets) + " |",
    ]
    for r in run["rows"]:
        if "refused" in r:
            lines.append(f"| `{r['key']}` | {r['value']:g} ({r['default']:g}) | refused by the config model |")
            continue
        cells = []
        for b in budgets:
            d = r["paired"][b]
            star = "*" if d["significant"] else ""
            cells.append(f"{r['recall'][b]:.3f} ({d['diff']:+.3f}{star})")
        lines.append(f"| `{r['key']}` | {r['value']:g} ({r['default']:g}) | " + " | ".join(cells) + " |")
    lines += ["", "In brackets: the paired difference against the defaults; * its 95% bootstrap interval excludes 0."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--table", type=Path, default=None, help="print the table of a finished run and stop")
    ap.add_argument("--uri")
    ap.add_argument("--keys", default=",".join(KEYS))
    ap.add_argument("--factors", default=",".join(str(f) for f in FACTORS))
    ap.add_argument("--out", type=Path, default=None)
    a = ap.parse_args(argv)
    if a.table is not None:
        print(table(json.loads(a.table.read_text())), end="")
        return
    if not a.uri or a.out is None:
        ap.error("--uri and --out are needed to run (or --table FILE to print one)")

    from driftgraph.errors import ConfigError

    units = data.text_units()
    qs = data.questions()
    base = common.engine(a.uri)
    qvec = dict(zip([q.id for q in qs], base.embed([q.question for q in qs]), strict=True))
    defaults = base.config.local.model_dump(mode="json")
    if defaults["min_similarity"] is None:  # calibrated per index (issue 37): scale the value this index holds
        from driftgraph.store.calibration import read_calibration

        cal = read_calibration(base.store)
        defaults["min_similarity"] = cal.min_similarity if cal else defaults["min_similarity_fallback"]

    def recall(extra: dict[str, Any]) -> dict[str, list[float]]:
        return common.local_recall(a.uri, extra, qs, qvec, units, BUDGETS)

    ref = recall({})
    print("defaults", {b: round(metrics.mean(v), 3) for b, v in ref.items()}, flush=True)
    rows: list[dict[str, Any]] = []
    for key in a.keys.split(","):
        for factor in (float(f) for f in a.factors.split(",")):
            over, value = scaled(defaults, key, factor)
            row: dict[str, Any] = {"key": key, "factor": factor, "value": value, "default": scaled(defaults, key, 1)[1]}
            try:
                common.config(a.uri, extra={"local": over})
            except ConfigError as err:
                rows.append({**row, "refused": str(err).splitlines()[0]})
                continue
            got = recall(over)
            row["recall"] = {b: metrics.mean(v) for b, v in got.items()}
            row["paired"] = {b: metrics.paired(got[b], ref[b]) for b in got}
            rows.append(row)
            print(key, value, {b: round(v, 3) for b, v in row["recall"].items()}, flush=True)
    base.close()
    out = {
        "machine": machine.describe(),
        "command": "python -m bench sensitivity --uri URI --out " + str(a.out),
        "budgets": list(BUDGETS),
        "questions": len(qs),
        "defaults": {b: metrics.mean(v) for b, v in ref.items()},
        "rows": rows,
    }
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(out, indent=1))
    print(table(out), end="")
