"""The incremental-indexing section of latest.md, rendered from ``raw/index_incremental.json``
(``python -m bench index-overhead``), so ``python -m bench report`` keeps it."""

from __future__ import annotations


def _pct(x: float) -> str:
    return f"{100 * x:.2f}%"


def section(d: dict) -> list[str]:
    m = d["machine"]
    steps = d.get("incremental") or []
    if not steps:
        return []
    cold = next((r for r in d.get("runs", []) if r.get("run") == "cold"), None)
    base = cold["counts"] if cold else {}
    lines = [
        "## 8. Incremental indexing: passages added to a 1,000-passage MuSiQue index",
        "",
        f"`NEO4J_URI=... {d['command']}` (raw: `bench/results/raw/index_incremental.json`; {m['date']}, {m['cpu']}, "
        f"{m['ram']}, load average {m['load']} at the start and {d.get('load_after', '?')} at the end; "
        f"driftgraph {m['driftgraph']}).",
        f"The first {d['chunks_requested']:,} MuSiQue passages are indexed with the deterministic fake LLM "
        "(tests/support/index_responder.py, instant answers, through the real `openai` client)"
        + (
            f": {base['entities']:,} entities, {base['relationships']:,} relationships, "
            f"{base['communities']:,} communities on {base['levels']} levels."
            if base
            else "."
        ),
        "Then 1 passage, then 10 more, each naming an entity already indexed, are appended and `index` runs again. "
        '"Changed" communities are those whose id (level + members) was not in the database before; '
        '"regenerated" reports include those of kept communities whose rows changed (`reports_outdated`). '
        "One more such passage then goes in through the document API (`engine.documents.add`) and out again "
        '(`delete`), where the run recorded it (mode "document API"). '
        "The two `index` steps are replayed from a cached rebuild with `index.stable_communities: false` "
        "(the whole graph re-clustered each run, the earlier behaviour).",
        "",
        "| step | mode | communities | changed | share | reports regenerated (outdated) | share "
        "| report calls | wall s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for s in steps:
        lines.append(
            f"| {s['run']} | {s['mode']} | {s['communities']:,} | {s['communities_changed']:,} | "
            f"{_pct(s['changed_share'])} | {s['reports_generated']:,} ({s['reports_outdated']}) | "
            f"{_pct(s['regenerated_share'])} | {s['chat_calls_by_phase'].get('report', 0):,} | "
            f"{s['wall_seconds']:.1f} |"
        )
    lines += [
        "",
        f"Goal (issue 19): {d['goal']}. Regenerated can exceed changed by the outdated reports: communities whose "
        "members are the same but whose rows (a new description, a new degree) changed, which a report reads and "
        "so rewrites. With an instant fake LLM wall time is the pipeline's fixed work and does not show what the "
        "report calls would cost against a real model.",
        "",
    ]
    return lines
