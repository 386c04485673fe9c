"""Answer quality with a real model: the table of a ``python -m bench answers`` raw file (issue 37, item 8).

python -m bench answers-table [FILE]        # default: results/raw/answers_real_1.5b.json

One row per mode that asked the model: questions answered so far, exact match, token F1 and "supported" (the
gold answer in the rows the answer cites), each mean with its 95% bootstrap interval over the questions; then
each mode paired with local on the same questions (difference and interval; "n.s." when the interval holds 0);
failed answers and mean context tokens. The intervals come from the raw file's summary, as ``answers`` wrote
it (seeded), so the table is the file's, not a new computation.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from bench import paths

DEFAULT = paths.RAW / "answers_real_1.5b.json"
SCORES = ("em", "f1", "supported")


def _cell(s: dict[str, Any], key: str) -> str:
    if s.get(key) is None:
        return "-"
    lo, hi = s[f"{key}_ci"]
    return f"{s[key]:.3f} [{lo:.2f}, {hi:.2f}]"


def _pair(s: dict[str, Any], key: str) -> str:
    p = s.get(f"{key}_vs_local")
    if not p:
        return "-"
    mark = "" if p["significant"] else " n.s."
    return f"{p['diff']:+.3f} [{p['lo']:+.2f}, {p['hi']:+.2f}]{mark}"


def table(d: dict[str, Any]) -> list[str]:
    asked = {m: s for m, s in d["summary"].items() if "em" in s}
    lines = [
        f"{d['endpoint']['model'] if d.get('endpoint') else 'offline'}, context budget {d.get('budget') or 'derived'}"
        f" tokens, {'complete' if d.get('complete') else 'in progress'}; `{d['command']}` ({d['machine']['date']}).",
        "",
        "| mode | questions | EM | F1 | supported | failed answers | context tokens | model calls | prompt tokens |",
        "|---|---:|---|---|---|---:|---:|---:|---:|",
    ]
    for mode, s in asked.items():
        lines.append(
            f"| {mode} | {s['questions']} | {_cell(s, 'em')} | {_cell(s, 'f1')} | {_cell(s, 'supported')} | "
            f"{s.get('failed_answers', 0) + s['errors']} | {s['context_tokens_mean']:,.0f} | "
            f"{s.get('llm_calls_mean', 0):,.1f} | {s.get('prompt_tokens_mean', 0):,.0f} |"
        )
    paired = [(m, s) for m, s in asked.items() if m != "local" and any(s.get(f"{k}_vs_local") for k in SCORES)]
    if paired:
        lines += ["", "| against local, paired | questions | EM | F1 | supported |", "|---|---:|---|---|---|"]
        for m, s in paired:
            n = next((s[f"{k}_vs_local"].get("n", s["questions"]) for k in SCORES if s.get(f"{k}_vs_local")), 0)
            lines.append(f"| {m} | {n} | {_pair(s, 'em')} | {_pair(s, 'f1')} | {_pair(s, 'supported')} |")
    if d.get("reused"):
        r = d["reused"]
        lines += ["", f"{', '.join(r['modes'])}: {r['rows']} answers reused from `{r['file']}` (`{r['command']}`)."]
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench answers-table", description=__doc__.splitlines()[0])
    ap.add_argument("file", nargs="?", type=Path, default=DEFAULT, help="a bench answers raw file")
    a = ap.parse_args(argv)
    print("\n".join(table(json.loads(a.file.read_text(encoding="utf-8")))))
    return 0
