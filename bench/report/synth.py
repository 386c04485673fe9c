"""The synthetic multi-hop section of latest.md, from ``raw/synth_questions.json``
(``python -m bench synth-recall``)."""

from __future__ import annotations

from bench.report.stats import paired_cell

DG = "driftgraph local (defaults)"


MECHANICAL = "a second set for the multi-hop mechanisms, mechanical wording, no model"


def section(d: dict, note: str = "", wording: str = MECHANICAL) -> list[str]:
    """``note``: what the set is to the settings (e.g. held out: other chains, ``--exclude``), after the title;
    ``wording``: how the questions were worded."""
    budgets = [str(b) for b in d["budgets"]]
    hops = sorted({str(h) for h in d["hops"]})
    counts = {h: sum(1 for x in d["hops"] if str(x) == h) for h in hops}
    m = d["machine"]
    out = [
        "## Synthetic multi-hop questions (MuSiQue index)" + (f", {note}" if note else ""),
        "",
        f"{len(d['hops'])} questions composed from the index's own triples by `bench/synth_questions.py` "
        f"({', '.join(f'{counts[h]} {h}-hop' for h in hops)}; `bench/questions/{d['questions']}`): {wording}. Run of "
        f"{m['date']} ({m['cpu']}, driftgraph {m['driftgraph']}): `{d['command']}`. Mean evidence recall with its "
        "95% bootstrap interval, then per hop count.",
        "",
        "| system | "
        + " | ".join(f"{int(b):,}" for b in budgets)
        + " | "
        + " | ".join(f"{h}-hop {int(b) // 1000}k" for h in hops for b in budgets)
        + " |",
        "|---|" + "---:|" * (len(budgets) * (1 + len(hops))),
    ]
    for name, s in d["systems"].items():
        sm = s["summary"]
        cells = [f"{sm[b]['mean']:.3f} [{sm[b]['lo']:.2f}–{sm[b]['hi']:.2f}]" for b in budgets]
        cells += [f"{sm[b]['per_hop'][h]:.3f}" for h in hops for b in budgets]
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    out += ["", f"Paired, {DG} minus each other system (mean difference [95% interval], questions won / lost):", ""]
    out += ["| against | " + " | ".join(f"{int(b):,}" for b in budgets) + " |", "|---|" + "---|" * len(budgets)]
    for name, p in d["paired_defaults_vs"].items():
        cells = [paired_cell(p[b], f"{p[b]['wins']}/{p[b]['losses']}", ", n.s.") for b in budgets]
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    return [*out, ""]
