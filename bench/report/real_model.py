"""The "A real small model" section of latest.md, from ``raw/real_model_<model>.json`` (written by
``python -m bench real-model``): per prompt, how the model's replies were read; the estimate against the run;
and each answer with its stop reason. Standard library only, like the rest of the report half."""

from __future__ import annotations

from typing import Any


def _answer_cell(row: dict[str, Any]) -> str:
    if row.get("error"):
        return f"error: {row['error'][:80]}"
    problem = row.get("answer_check")  # None: the answer passed driftgraph's answer check
    verdict = f"answer flagged: {problem}" if problem else "answered"
    if not row.get("answer"):
        verdict = "no answer"
    cites = {True: "citations valid", False: "INVALID citations", None: "no citation"}[row.get("citations_valid")]
    named = row.get("expected_found")  # words of the question's `expect` the answer names (never judged right)
    words = f"; names {', '.join(named)}" if named else ""
    return f"{verdict}; {cites}; {row.get('context_tokens', 0):,} context tokens{words}"


def section(d: dict[str, Any]) -> list[str]:
    """Markdown lines for one real-model run."""
    m, model = d["machine"], d["model"]
    lines = [
        f"## A real small model: Qwen2.5-Coder-{model['weights'].upper()}-Instruct Q4_K_M",
        "",
        f"{m['date']} · {m['cpu']} · {m['ram']} RAM · Python {m['python']} · driftgraph {m['driftgraph']} · "
        f"llama-cpp-python, {model['threads']} threads, context {model['ctx']} · `{d['command']}`"
        + ("" if d.get("complete") else " · **run incomplete**"),
        "",
    ]
    idx = d.get("index")
    if isinstance(idx, dict):
        g = idx["graph"]
        lines += [
            f"`index examples/docs`: {idx['seconds']:g} s, {g['entities']} entities, {g['relationships']} "
            f"relationships, {g['communities']} communities, {g['reports']} reports; "
            f"failures: {idx['failures']['count']}.",
            "",
            "| phase (prompt) | calls | read first time | after repair | never | cut off, records kept (loops cut) | "
            "format fallbacks | prompt / completion tokens |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for name, p in idx["phases"].items():
            label = f"{name} ({p['prompt']})" if p.get("prompt") else name
            lines.append(
                f"| {label} | {p['llm_calls']} | {p['parsed_first']} | {p['parsed_repaired']} | "
                f"{p['unparsed']} | {p.get('salvaged', 0)} ({p.get('loops_cut', 0)}) | {p['format_fallbacks']} | "
                f"{p['prompt_tokens']:,} / {p['completion_tokens']:,} |"
            )
        est = d.get("estimate_vs_actual") or {}
        if est:
            expected = all("expected_calls" in s for s in est.values())
            lines += [
                "",
                "`index --estimate` before the run, against the run (estimated: the upper bound, completions at "
                "their cap and every gleaning round" + ("; ~ the expected figure" if expected else "") + "):",
                "",
                "| stage | calls estimated / made | prompt tokens estimated / spent | completion tokens cap / spent |",
                "|---|---:|---:|---:|",
            ]
            for stage, s in est.items():
                tilde = (
                    (f" (~{s['expected_calls']})", f" (~{s['expected_prompt_tokens']:,})",
                     f" (~{s['expected_completion_tokens']:,})")
                    if expected else ("", "", "")
                )  # fmt: skip
                lines.append(
                    f"| {stage} | {s['estimated_calls']}{tilde[0]} / {s['calls']} | "
                    f"{s['estimated_prompt_tokens']:,}{tilde[1]} / {s['prompt_tokens']:,} | "
                    f"{s['estimated_completion_tokens_max']:,}{tilde[2]} / {s['completion_tokens']:,} |"
                )
    lines += ["", "| question | mode | stop reason | seconds | outcome |", "|---|---|---|---:|---|"]
    for row in d.get("answers", []):
        lines.append(
            f"| {row['id']} | {row['mode']} | {row.get('stop_reason')} | {row.get('seconds', 0):g} | "
            f"{_answer_cell(row)} |"
        )
    return lines + [""]
