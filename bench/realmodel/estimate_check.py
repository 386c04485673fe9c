"""``python -m bench estimate-check [--run FILE] --out FILE``: ``index --estimate`` set against a real run it predicts.

A real-model run (``python -m bench real-model``) records what indexing ``examples/docs`` spent, stage by stage.
This recomputes, with the code as it is now and no model, the cold estimate of that same input under the same
settings (the harness's ``config_extra``, an empty call cache), and puts each stage's bound and expected
figure beside what the run spent, with their ratios: how loose the bound is, and how far the expected figure
is from the truth, either way (issue 37, observation 2).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench import paths
from bench.realmodel.run import DOCS, config_extra
from bench.run import machine

KEYS = (("calls", "calls", "expected_calls"), ("prompt_tokens", "prompt_tokens", "expected_prompt_tokens"),
        ("completion_tokens", "completion_tokens_max", "expected_completion_tokens"))  # fmt: skip


def _ratio(a: float, b: float) -> float | None:
    return round(a / b, 2) if b else None


def compare(estimate: dict[str, Any], phases: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Per stage and in total: spent, bound, expected, and each as a multiple of what was spent."""
    rows: dict[str, Any] = {}
    for stage in [s["stage"] for s in estimate["stages"]] + ["total"]:
        est = estimate["total"] if stage == "total" else next(s for s in estimate["stages"] if s["stage"] == stage)
        spent = phases.get(stage, {})
        if stage == "total":
            spent = {
                k: sum(p.get(k, 0) for p in phases.values())
                for k in ("llm_calls", "prompt_tokens", "completion_tokens")
            }
        row: dict[str, Any] = {}
        for name, bound_key, expected_key in KEYS:
            used = spent.get("llm_calls" if name == "calls" else name, 0)
            row[name] = {
                "spent": used,
                "bound": est[bound_key],
                "expected": est[expected_key],
                "bound_x": _ratio(est[bound_key], used),
                "expected_x": _ratio(est[expected_key], used),
            }
        rows[stage] = row
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench estimate-check", description=__doc__.splitlines()[0])
    ap.add_argument("--run", type=Path, default=paths.RAW / "real_model_0.5b.json", help="a real-model raw file")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)
    from driftgraph.config import parse_config
    from driftgraph.index.estimate import estimate_index

    run = json.loads(a.run.read_text(encoding="utf-8"))
    model = f"qwen2.5-coder-{run['model']['weights']}-instruct-q4_k_m"
    with tempfile.TemporaryDirectory() as cache:
        extra = config_extra("http://127.0.0.1:9/v1", model, run["model"]["ctx"], Path(cache))
        cfg = parse_config({"neo4j": {"uri": "bolt://127.0.0.1:9"}, **extra})
        estimate = estimate_index(cfg, DOCS)
    payload = {
        "machine": machine.describe(),
        "command": "python -m bench estimate-check " + " ".join(sys.argv[2:] if argv is None else argv),
        "run": str(a.run.resolve().relative_to(paths.ROOT)),
        "run_command": run["command"],
        "input": str(DOCS.relative_to(paths.ROOT)),
        "chunks": estimate["chunks"],
        "stages": compare(estimate, {k: v for k, v in run["index"]["phases"].items() if k != "total"}),
    }
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
    for stage, row in payload["stages"].items():
        cells = "  ".join(
            f"{k} {v['spent']:,} bound {v['bound_x']}x expected {v['expected_x']}x" for k, v in row.items()
        )
        print(f"{stage:<17} {cells}")
    return 0
