"""The page's server-rendered cards that every mode shares: header, budget, route, entry verdicts, cost.

Each function takes the decoded retrieval (``read_trace(...)["retrieval"]``) and/or its ``trace`` and returns
an HTML fragment; every value from the database is escaped here (``esc``).
"""

from __future__ import annotations

from html import escape
from typing import Any

from driftgraph.view.modes import drift_card, global_card

__all__ = ["budget_card", "cost_card", "drift_card", "entry_card", "global_card", "header", "route_card"]

BUDGET_PARTS = (
    ("answer_reserve", "answer reserve", "answer"),
    ("prompt", "prompt", "prompt"),
    ("question", "question", "question"),
    ("history", "history", "history"),
    ("context", "context budget", "context"),
)
COST_KEYS = ("llm_calls", "prompt_tokens", "completion_tokens", "embedding_calls", "embedding_tokens", "cache_hits")


def esc(value: Any) -> str:
    return "" if value is None else escape(str(value))


def num(value: Any) -> str:
    """Thousands separators for ints, 4 significant decimals for floats, '' for None."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.4g}" if abs(value) >= 1000 else f"{value:.4g}"
    return esc(value)


def badge(text: Any, kind: str | None = None) -> str:
    return f'<span class="badge b-{esc(kind or text)}">{esc(text)}</span>'


def header(ret: dict[str, Any], trace: dict[str, Any]) -> str:
    """Id, mode, when, stop reason; the question and its rewrite."""
    rw = trace.get("rewrite") or {}
    rewrite = ""
    if rw:
        rewritten = rw.get("rewritten") or rw.get("query")
        rewrite = (
            f'<p class="rewrite">rewritten as: <b>{esc(rewritten)}</b>'
            + (f" <span class='muted'>({esc(rw.get('reason'))})</span>" if rw.get("reason") else "")
            + "</p>"
        )
    else:
        rewrite = '<p class="rewrite muted">no rewrite (single-turn question: asked as written)</p>'
    facts = [
        ("stop", ret.get("stop_reason")),
        ("context tokens", num(ret.get("context_tokens"))),
        ("round trips", trace.get("round_trips")),
        ("seed", ret.get("seed")),
        ("parent", ret.get("parent_id")),
    ]
    meta = " \u00b7 ".join(f"{k} <b>{esc(v)}</b>" for k, v in facts if v not in (None, ""))
    notes = "".join(f'<p class="small muted">note: {esc(n)}</p>' for n in trace.get("notes") or [])
    absent = trace.get("absent_sources") or []
    absent_html = f'<p class="small muted">absent from the index: {esc(", ".join(absent))}</p>' if absent else ""
    return (
        f'<header class="card"><h1>{badge(ret.get("mode"), "mode")} Retrieval <span class="id">'
        f'{esc(ret.get("id"))}</span></h1><div class="meta">created <b>{esc(ret.get("created_at"))}</b> \u00b7 {meta}'
        f'</div><p class="question">{esc(ret.get("query"))}</p>{rewrite}{cited_sources(trace)}{notes}{absent_html}'
        "</header>"
    )


def cited_sources(trace: dict[str, Any]) -> str:
    """The sources the answer cited (``[Data: Sources (3)]``) with where each came from, e.g. ``3 page 12``."""
    records = (trace.get("citations") or {}).get("cited_sources") or []
    if not records:
        return ""
    parts = [
        f'<span data-cited-id="{esc(r.get("id"))}"><b>{esc(r.get("ref"))}</b>'
        + (f" {esc(r['location'])}" if r.get("location") else "")
        + "</span>"
        for r in records
    ]
    return '<p class="small" id="cited">cited sources: ' + " \u00b7 ".join(parts) + "</p>"


def bar(parts: list[tuple[str, str, float]], total: float) -> str:
    """A stacked bar: (css class, tooltip, value) segments as shares of ``total``."""
    total = max(total, sum(v for _, _, v in parts), 1)
    spans = "".join(
        f'<span class="seg-{c}" style="width:{100 * v / total:.3f}%" title="{esc(t)}">'
        f"{esc(t) if v / total > 0.18 else ''}</span>"
        for c, t, v in parts
        if v
    )
    return f'<div class="bar">{spans}</div>'


def breakdown(b: dict[str, Any], used: int | None, title: str) -> str:
    """One budget: what a call may use split into its terms, its share of the window, used vs budget, the sum."""
    window = int(b.get("window") or 0)
    ctx = int(b.get("context") or 0)
    parts = [(cls, f"{label} {int(b.get(key) or 0):,}", float(b.get(key) or 0)) for key, label, cls in BUDGET_PARTS]
    per_call = int(sum(v for _, _, v in parts))
    slack = max(0, window - per_call)
    legend = "".join(
        f'<span><i class="seg-{cls}"></i>{esc(label)} <b>{num(b.get(key))}</b></span>'
        for key, label, cls in BUDGET_PARTS
    )
    share = f"{100 * per_call / window:.1f}%" if window else "?"
    out = [
        f"<h3>{esc(title)}</h3>",
        f'<div class="small">one call: <b>{per_call:,}</b> tokens</div>',
        bar(parts, per_call),
        f'<div class="legend">{legend}</div>',
        f'<div class="small" style="margin-top:6px">of the model window <b>{window:,}</b>: {share} '
        f"(the cap leaves {slack:,} unused)</div>",
        f'<div class="bar thin">{_seg("context", "this call", per_call, window)}'
        f"{_seg('slack', f'left by the cap {slack:,}', slack, window)}</div>",
    ]
    if used is not None and ctx:
        over = max(0, used - ctx)
        top = max(ctx, used)
        out.append(
            f'<div class="small" style="margin-top:6px">context used <b>{used:,}</b> of <b>{ctx:,}</b> '
            f"({100 * used / ctx:.1f}%)" + (f", <b>{over:,} over</b>" if over else "") + "</div>"
        )
        out.append(
            f'<div class="bar">{_seg("used", f"used {used:,}", min(used, ctx), top)}'
            f"{_seg('free', f'free {max(0, ctx - used):,}', max(0, ctx - used), top)}"
            f"{_seg('over', f'over {over:,}', over, top)}</div>"
        )
    fixed = " (fixed by --budget)" if b.get("fixed") else ""
    out.append(
        f'<div class="arith">window {num(window)} \u2212 answer {num(b.get("answer_reserve"))} \u2212 prompt '
        f"{num(b.get('prompt'))} \u2212 question {num(b.get('question'))} \u2212 history {num(b.get('history'))} = "
        f"{num(b.get('derived'))}; cap {num(b.get('cap'))} \u2192 context {num(ctx)}{fixed}</div>"
    )
    return "".join(out)


def _seg(cls: str, tip: str, value: float, total: float) -> str:
    if not value or not total:
        return ""
    return f'<span class="seg-{cls}" style="width:{100 * value / total:.3f}%" title="{esc(tip)}"></span>'


def budget_card(ret: dict[str, Any], trace: dict[str, Any], items: list[dict[str, Any]]) -> str:
    """The budget arithmetic as bars: local/basic one budget, global map + reduce, DRIFT the call budget."""
    used = ret.get("context_tokens")
    incl = sum(int(it.get("tokens") or 0) for it in items if it["status"] == "included")
    blocks = []
    if trace.get("budget"):
        title = "reduce budget" if ret.get("mode") == "global" else "context budget"
        blocks.append(breakdown(trace["budget"], used if isinstance(used, int) else None, title))
        blocks.append(
            f'<p class="small muted">included items add up to {incl:,} tokens (rows only; the '
            "rendered context adds table headers and notes)</p>"
        )
    mp = trace.get("map") or {}
    if mp.get("budget"):
        blocks.append(
            breakdown(
                mp["budget"],
                max((b.get("tokens") or 0 for b in trace.get("batches") or []), default=None),
                "map batch budget (largest batch as used)",
            )
        )
    steps = trace.get("step_budgets") or {}
    if steps:
        first, b = next(iter(steps.items()))
        same = sum(1 for v in steps.values() if v == b)
        blocks.append(breakdown(b, None, f"step context budget ({first}; the same for {same} of {len(steps)} steps)"))
    cb = trace.get("call_budget")
    if cb:
        rows = []
        for key, cap in (("llm_calls", "max_llm_calls"), ("prompt_tokens", "max_prompt_tokens")):
            have, limit = int(cb.get(key) or 0), int(cb.get(cap) or 0)
            rows.append(
                f"<h3>{esc(key.replace('_', ' '))}: {have:,} of {limit:,}</h3>"
                + bar([("used", f"used {have:,}", float(have)), ("free", "free", float(max(0, limit - have)))], limit)
            )
        blocks.append("".join(rows))
    if not blocks:
        return ""
    return f'<section class="card" id="budget"><h2>Budget</h2>{"".join(blocks)}</section>'


def route_card(trace: dict[str, Any]) -> str:
    r = trace.get("route")
    if not r:
        extra = trace.get("retrieval")
        if not extra:
            return ""
        rows = "".join(f"<tr><th>{esc(k)}</th><td>{num(v)}</td></tr>" for k, v in extra.items())
        return f'<section class="card" id="route"><h2>Retrieval</h2><table>{rows}</table></section>'
    floors = r.get("floors") or {}
    order = " \u2192 ".join(
        f"{esc(s)}" + (f" <span class='muted'>(floor {esc(floors[s])})</span>" if s in floors else "")
        for s in r.get("order") or []
    )
    return (
        f'<section class="card" id="route"><h2>Route {badge(r.get("shape"), "mode")}</h2><div>fill order: {order}'
        f'</div><div class="meta">{esc(r.get("reason"))} \u00b7 router <b>{esc(r.get("router"))}</b></div></section>'
    )


def _applied(stored: dict[str, Any]) -> dict[str, list[tuple[str, float]]]:
    """The gates the trace recorded (``thresholds``: the values applied and where min_similarity came from)."""
    applied = stored.get("applied") or {}
    source = (stored.get("min_similarity") or {}).get("source") or "config"
    out: dict[str, list[tuple[str, float]]] = {}
    if isinstance(applied.get("entity"), int | float):
        out["entity"] = [(f"min_similarity ({source})", float(applied["entity"]))]
    for kind in ("chunk", "report"):
        if isinstance(applied.get(kind), int | float) and applied[kind] > -1:
            out[kind] = [(f"{kind} gate", float(applied[kind]))]
    return out


def _thresholds(
    params: dict[str, Any], entry: list[dict[str, Any]], stored: dict[str, Any] | None = None
) -> dict[str, list[tuple[str, float]]]:
    """The gates each entry kind was held to, as (name, value): the trace's own record (``thresholds``) when it
    has one; for a retrieval stored before that, from the params (chunk and report gates as local.py had them)."""
    if stored:
        applied = _applied(stored)
        _relative(applied, params, entry)
        return applied
    out: dict[str, list[tuple[str, float]]] = {}
    min_sim = params.get("min_similarity")
    if isinstance(min_sim, int | float):
        out["entity"] = [("min_similarity", float(min_sim))]
        _relative(out, params, entry)
    strict = any(e.get("reason") == "off_topic" for e in entry)
    chunk = params.get("min_similarity") if strict else params.get("chunk_min_similarity")
    if isinstance(chunk, int | float):
        name = "min_similarity (off topic)" if strict else "chunk_min_similarity"
        out["chunk"] = [(name, float(chunk))]
        reports = [e for e in entry if e.get("kind") == "report"]
        if not any(e.get("status") == "kept" and (e.get("similarity") or 0) < chunk for e in reports):
            out["report"] = [(name, float(chunk))]
    return out


def _relative(out: dict[str, list[tuple[str, float]]], params: dict[str, Any], entry: list[dict[str, Any]]) -> None:
    """The relative entity gate (``relative_similarity`` x the best entity's similarity), after the absolute one."""
    sims = [e.get("similarity") for e in entry if e.get("kind", "entity") == "entity"]
    best = max((s for s in sims if isinstance(s, int | float)), default=None)
    rel = params.get("relative_similarity")
    if "entity" in out and best is not None and isinstance(rel, int | float):
        out["entity"].append((f"{rel:g} \u00d7 best", float(rel) * float(best)))


def _score_cell(value: Any, gates: list[tuple[str, float]], kept: bool) -> str:
    v = float(value) if isinstance(value, int | float) else None
    if v is None:
        return ""
    marks = "".join(
        f'<b class="{"rel" if i else ""}" style="left:{max(0.0, min(1.0, g)) * 100:.1f}%" '
        f'title="{esc(name)} {g:.3f}"></b>'
        for i, (name, g) in enumerate(gates)
    )
    fill = f'<span class="{"" if kept else "no"}" style="width:{max(0.0, min(1.0, v)) * 100:.1f}%"></span>'
    return f'<span class="score">{fill}{marks}</span>{v:.3f}'


def entry_card(ret: dict[str, Any], trace: dict[str, Any], labels: dict[str, str]) -> str:
    """Entry verdicts: each candidate's similarity drawn against the thresholds from the stored params."""
    entry = trace.get("entry") or []
    if not entry:
        return ""
    gates = _thresholds(ret.get("params") or {}, entry, trace.get("thresholds"))
    rows = []
    for e in entry:
        kind = e.get("kind", "entity")
        g = gates.get(kind, [])
        title = e.get("title") or labels.get(str(e.get("id")), "") or str(e.get("id"))[:16]
        sim = e.get("similarity", e.get("score"))
        rows.append(
            f'<tr class="st-{esc(e.get("status"))}" data-entry-id="{esc(e.get("id"))}"><td>{esc(kind)}</td>'
            f'<td class="clip" title="{esc(e.get("id"))}">{esc(title)}</td>'
            f'<td class="nw">{_score_cell(sim, g, e.get("status") == "kept")}</td>'
            f'<td class="num">{esc(e.get("vector_rank"))}</td><td class="num">{esc(e.get("fulltext_rank"))}</td>'
            f"<td>{badge(e.get('status'))}</td><td>{esc(e.get('reason'))}</td></tr>"
        )
    legend = "; ".join(f"{esc(k)}: " + ", ".join(f"{esc(n)} {v:.3f}" for n, v in g) for k, g in gates.items())
    kept = sum(1 for e in entry if e.get("status") == "kept")
    return (
        f'<section class="card" id="entry"><h2>Entry verdicts</h2><div class="meta">thresholds (black mark, purple '
        f"= relative): {legend or 'none stored'} \u00b7 {len(entry)} candidates, {kept} kept</div>"
        '<div class="scroll"><table><thead><tr><th>kind</th><th>candidate</th>'
        "<th>similarity vs threshold</th><th class=num>vec</th><th class=num>text</th><th>verdict</th><th>reason"
        f"</th></tr></thead><tbody>{''.join(rows)}</tbody></table></div></section>"
    )


def cost_card(ret: dict[str, Any], trace: dict[str, Any]) -> str:
    """The cost ledger: one small table per phase (and the total), then the timings."""
    cost = ret.get("cost") or {}
    phases = dict(cost.get("phases") or {})
    if "total" not in phases:
        phases["total"] = {k: cost.get(k) for k in COST_KEYS if k in cost}
    tables = []
    for name, row in phases.items():
        if not isinstance(row, dict):
            continue
        body = "".join(
            f'<tr><td>{esc(k.replace("_", " "))}</td><td class="num">{num(row.get(k))}</td></tr>'
            for k in COST_KEYS
            if k in row
        )
        tables.append(
            f'<table data-phase="{esc(name)}"><thead><tr><th colspan=2>{esc(name)}</th></tr></thead>'
            f"<tbody>{body}</tbody></table>"
        )
    timings = trace.get("timings") or {}
    if timings:
        body = "".join(f'<tr><td>{esc(k)}</td><td class="num">{num(v)} s</td></tr>' for k, v in timings.items())
        tables.append(f"<table><thead><tr><th colspan=2>timings</th></tr></thead><tbody>{body}</tbody></table>")
    return f'<section class="card" id="cost"><h2>Cost ledger</h2><div class="ledger">{"".join(tables)}</div></section>'
