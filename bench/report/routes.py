"""Sections for ``raw/routes.json`` (short forms and per-source caps on operation-dulce, the MuSiQue check),
``raw/basic_baseline.json`` (GraphRAG 3.2.0's basic search against driftgraph basic and local) and
``raw/speed_product.json`` (local latency on the product path next to the bare assembly)."""

from __future__ import annotations

from typing import Any

from bench.metrics import mean, mean_ci, paired
from bench.report.fmt import machine_line, per_rep, ratio, sp


def _kind(rows: list[dict], shape: str, kind: str) -> str:
    vals = [r["recall"][kind] for r in rows if r["shape"] == shape and kind in r["recall"]]
    return f"{mean(vals):.3f}" if vals else "–"


def routes(d: dict[str, Any]) -> list[str]:
    du = d["dulce"]
    n_th = sum(1 for r in next(iter(next(iter(du["runs"].values())).values())) if r["shape"] == "thematic")
    n_rel = sum(1 for r in next(iter(next(iter(du["runs"].values())).values())) if r["shape"] == "relational")
    out = [
        "## Routes: report summaries and per-source caps (operation-dulce)",
        "",
        machine_line(d),
        "",
        f"{n_th} thematic and {n_rel} relational questions on the operation-dulce index "
        "(`bench/questions/dulce_routes.jsonl`; how the gold ids were chosen: bench/README.md), context only, "
        "at fixed budgets. Recall = gold items in the context / gold items of the question, averaged over the "
        "questions of that shape; `all` pools every gold item (reports, entities, relationships, text units). "
        "A report counts whether it entered in full or as its summary. Text units here are ~1,200 tokens each, "
        "community reports 600–1,400 (summaries 80–160). `before` is the fill as it was: no summaries, no caps.",
        "",
        "| configuration | budget | thematic: all | reports | text units | relational: all | entities | "
        "relationships | text units | summaries used | dropped for `source_cap` | mean tokens |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, runs in du["runs"].items():
        for b, rows in runs.items():
            summ = sum(len(r["summaries"]) for r in rows)
            capped = sum(r["dropped"].get("source_cap", 0) for r in rows)
            out.append(
                f"| {name} | {int(b):,} | {_kind(rows, 'thematic', 'all')} | {_kind(rows, 'thematic', 'report')} | "
                f"{_kind(rows, 'thematic', 'chunk')} | {_kind(rows, 'relational', 'all')} | "
                f"{_kind(rows, 'relational', 'entity')} | {_kind(rows, 'relational', 'relationship')} | "
                f"{_kind(rows, 'relational', 'chunk')} | {summ} | {capped} | "
                f"{mean(r['tokens'] for r in rows):,.0f} |"
            )
    wrong = sorted(
        {r["id"] for runs in du["runs"].values() for rows in runs.values() for r in rows if r["route"] != r["shape"]}
    )
    out += [
        "",
        "Every question took the route of its shape."
        if not wrong
        else f"Questions routed otherwise than their shape: {', '.join(wrong)}.",
        "",
    ]
    mq = d.get("musique")
    if mq:
        names = list(mq["runs"])
        before, after = mq["runs"][names[0]], mq["runs"][names[-1]]
        out += [
            "MuSiQue dev (50 questions, evidence recall): the same change on questions the rule routes `fact` "
            "(no caps there; summaries can still enter).",
            "",
            "| budget | " + " | ".join(names) + " | questions changed | routes (fact / relational / thematic) |",
            "|---:|" + "---:|" * (len(names) + 2),
        ]
        for b in before:
            rb, ra = before[b], after[b]
            changed = sum(1 for x, y in zip(rb, ra, strict=True) if x["recall"] != y["recall"])
            shapes = [sum(1 for r in ra if r["route"] == s) for s in ("fact", "relational", "thematic")]
            cells = [f"{mean(r['recall'] for r in mq['runs'][n][b]):.3f}" for n in names]
            out.append(f"| {int(b):,} | " + " | ".join(cells) + f" | {changed} | {' / '.join(map(str, shapes))} |")
        out.append("")
    return out


GR, GR_WIDE = "GraphRAG 3.2.0 basic (its defaults: k = 10)", "GraphRAG 3.2.0 basic, k = 100"


def basic_baseline(d: dict[str, Any]) -> list[str]:
    budgets = [str(b) for b in d["budgets"]]
    gr = d["graphrag"]
    systems: dict[str, dict[str, list[dict]]] = {
        GR: gr["quality"],
        GR_WIDE: gr["quality_wide_k"],
        **d["driftgraph"]["systems"],
    }

    def rec(rows: list[dict], fair: bool) -> list[float]:
        return [r.get("recall_unquoted", r["recall"]) if fair else r["recall"] for r in rows]

    out = [
        "## GraphRAG 3.2.0 basic search as a baseline (MuSiQue dev)",
        "",
        machine_line(d),
        "",
        "Evidence recall at equal budgets, 50 dev questions, 95% bootstrap interval over questions (2,000 "
        "resamples, seed 0); mean context tokens in parentheses. GraphRAG's `BasicSearchContext` is built as "
        "`get_basic_search_engine` builds it (`bench/gr/basic.py`) over a `text_unit_text` LanceDB store holding "
        "the same MiniLM vectors driftgraph uses. Its context is a CSV table (`to_csv`), which doubles the quotes "
        "of a passage holding `\"` or `|`; GraphRAG's rows are scored after undoing that quoting (the text is "
        "there, escaped). Strictly verbatim, as the local baseline is scored, GraphRAG basic would score "
        + ", ".join(f"{mean(r['recall'] for r in gr['quality'][b]):.3f}" for b in budgets)
        + " (k = 10) at these budgets.",
        "",
        "| system | " + " | ".join(f"{int(b):,}" for b in budgets) + " |",
        "|---|" + "---:|" * len(budgets),
    ]
    for name, by_b in systems.items():
        fair = name in (GR, GR_WIDE)
        cells = [f"{mean_ci(rec(by_b[b], fair))} ({mean(r['tokens'] for r in by_b[b]):,.0f})" for b in budgets]
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    for label, key in ((GR, "quality"), (GR_WIDE, "quality_wide_k")):
        out += [
            "",
            f"Paired by question against {label}: mean difference [95% interval], questions won / lost / tied.",
            "",
            "| system minus it | " + " | ".join(f"{int(b):,}" for b in budgets) + " |",
            "|---|" + "---|" * len(budgets),
        ]
        for name in d["driftgraph"]["systems"]:
            cells = []
            for b in budgets:
                g = {r["id"]: r.get("recall_unquoted", r["recall"]) for r in gr[key][b]}
                s = {r["id"]: r["recall"] for r in systems[name][b]}
                ids = sorted(g.keys() & s.keys())
                p = paired([s[i] for i in ids], [g[i] for i in ids], seed=0)
                sig = "" if p["significant"] else " **not significant**"
                cells.append(
                    f"{p['diff']:+.3f} [{p['lo']:+.2f}, {p['hi']:+.2f}] {p['wins']}/{p['losses']}/{p['ties']}{sig}"
                )
            out.append(f"| {name} | " + " | ".join(cells) + " |")
    out += [
        "",
        "GraphRAG's basic search takes its `k` = 10 nearest text units whatever the budget, so its context stays "
        "~1,100 tokens at every budget. With `k` = 100 it has more than fits, but it adds them in the text-unit "
        "table's order, not by similarity (`BasicSearchContext.build_context` filters its list of all text units "
        "by the hit ids), so a small budget fills with whichever hits come first in the table.",
        "",
    ]
    return out


def product_path(d: dict[str, Any]) -> list[str]:
    dg, api, gr = d["driftgraph_ms"], d["driftgraph_api_ms"], d["graphrag_ms"]
    return [
        "## Local latency: the product path next to the bare assembly",
        "",
        machine_line(d),
        "",
        f"One `python -m bench speed` run at a {d['budget']:,}-token budget, {len(dg[0])} MuSiQue questions × "
        f"{len(dg)} runs, on a shared machine under heavy load (see the load average): absolute times are "
        "several times the quiet-machine figures of section 2; the ratios, taken per run within this one "
        "invocation, are the result. The product path is `Engine.query_local(question, context_only=True)`: "
        "schema check, query embedding (from the bench's cache), retrieval + assembly and the trace write to "
        "Neo4j; it is timed right after the bare `build_local_context` of the same question (vector handed in).",
        "",
        "| | p50 ms | p95 ms |",
        "|---|---:|---:|",
        f"| driftgraph bare assembly (`build_local_context`) | {sp(per_rep(dg, 50))} | {sp(per_rep(dg, 95))} |",
        f"| driftgraph product path (`Engine.query_local`, trace written) | {sp(per_rep(api, 50))} | "
        f"{sp(per_rep(api, 95))} |",
        f"| ratio product path / bare assembly (per run) | {ratio(api, dg, 50)}× | {ratio(api, dg, 95)}× |",
        f"| GraphRAG 3.2.0 `LocalSearchMixedContext.build_context`, same run | {sp(per_rep(gr, 50))} | "
        f"{sp(per_rep(gr, 95))} |",
        f"| ratio GraphRAG / driftgraph product path (per run) | {ratio(gr, api, 50)}× | {ratio(gr, api, 95)}× |",
        "",
    ]
