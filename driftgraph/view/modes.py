"""The mode-specific cards: DRIFT's step tree (with the stop reason and what stayed uncovered) and global
search's report tree (each report's stage and verdict), its map batches and its key points.

DRIFT steps are not part of ``read_trace``: they come from ``fetch_subgraph``'s ``steps`` (``cypher/view/steps``);
without them the card says so and lists the step ids the items name.
"""

from __future__ import annotations

from collections.abc import Callable
from html import escape
from typing import Any

DASH = "\u2013"
MAX_ROWS = 1000  # points / dropped follow-ups shown per table; the rest are counted


def _esc(value: Any) -> str:
    return "" if value is None else escape(str(value))


def _badge(text: Any, kind: Any = None) -> str:
    return f'<span class="badge b-{_esc(kind or text)}">{_esc(text)}</span>'


def _table(headers: list[str], rows: list[list[Any]], attrs: str = "") -> str:
    shown = rows[:MAX_ROWS]
    more = f'<p class="small muted">{len(rows) - len(shown)} more rows not shown</p>' if len(rows) > len(shown) else ""
    head = "".join(f"<th>{_esc(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{_esc(c)}</td>" for c in r) + "</tr>" for r in shown)
    return f"<table{attrs}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>{more}"


def _tree(
    items: list[dict[str, Any]], parent_of: dict[str, str | None], line: Callable[[dict[str, Any]], str], cls: str
) -> str:
    """Nested lists from parent links; an item whose parent is unknown is a root; cycles are cut."""
    ids = {str(i["id"]) for i in items}
    children: dict[str | None, list[dict[str, Any]]] = {}
    for it in items:
        p = parent_of.get(str(it["id"]))
        children.setdefault(p if p in ids else None, []).append(it)
    seen: set[str] = set()

    def walk(parent: str | None) -> str:
        out = []
        for it in children.get(parent, []):
            iid = str(it["id"])
            if iid in seen:
                continue
            seen.add(iid)
            sub = walk(iid)
            out.append(f'<li class="st-{_esc(it.get("status"))}">{line(it)}{f"<ul>{sub}</ul>" if sub else ""}</li>')
        return "".join(out)

    return f'<ul class="tree {cls}">{walk(None)}</ul>'


def drift_card(ret: dict[str, Any], trace: dict[str, Any], graph: dict[str, Any]) -> str:
    """Stop reason, the step tree with scores, the uncovered and dropped follow-ups, primer and reduce."""
    params = ret.get("params") or {}
    steps = list(graph.get("steps") or [])
    sufficient = params.get("sufficient_score")

    def line(s: dict[str, Any]) -> str:
        score = s.get("score")
        width = max(0.0, min(100.0, float(score))) if isinstance(score, int | float) else 0.0
        bar = (
            f'<span class="score" title="score {_esc(score)} (sufficient {_esc(sufficient)})"><span '
            f'style="width:{width:.1f}%"></span>'
            + (f'<b style="left:{float(sufficient):.1f}%"></b>' if isinstance(sufficient, int | float) else "")
            + "</span>"
        )
        detail = s.get("error") or s.get("answer")
        facts = [
            s.get("kind"),
            f"depth {s.get('depth')}",
            f"epoch {s.get('epoch')}" if s.get("epoch") is not None else None,
            f"{s.get('included') or 0} items" if s.get("status") != "uncovered" else None,
        ]
        head = (
            f'<span data-step-id="{_esc(s.get("id"))}"><b>{_esc(s.get("id"))}</b> {_badge(s.get("status"))}'
            f"{bar}<span class='small'>{_esc(score if score is not None else DASH)}</span> "
            f'<span class="q">{_esc(s.get("query"))}</span> <span class="small muted">'
            f"{_esc(' · '.join(str(f) for f in facts if f))}</span></span>"
        )
        if not detail:
            return head
        label = "error" if s.get("error") else "answer"
        return f'<details><summary>{head}</summary><div class="answer"><b>{label}:</b> {_esc(detail)}</div></details>'

    if steps:
        tree = _tree(steps, {str(s["id"]): s.get("parent") for s in steps}, line, "steps")
    else:
        hops = sorted({str(i.get("hop")) for i in trace.get("items") or [] if i.get("hop")})
        tree = (
            '<p class="muted">step tree not loaded (fetch_subgraph gives it); items name steps: '
            f"{_esc(', '.join(hops))}</p>"
        )
    uncovered = [s for s in steps if s.get("status") == "uncovered"]
    unc = (
        _table(
            ["step", "parent", "depth", "follow-up question"],
            [[s.get("id"), s.get("parent"), s.get("depth"), s.get("query")] for s in uncovered],
            ' id="uncovered"',
        )
        if uncovered
        else '<p class="small muted">none: every queued follow-up was answered</p>'
    )
    dropped = trace.get("dropped_follow_ups") or []
    drop = (
        _table(
            ["parent", "follow-up", "reason", "duplicate of", "from"],
            [
                [d.get("parent"), d.get("query"), d.get("reason"), d.get("duplicate_of"), d.get("source")]
                for d in dropped
            ],
        )
        if dropped
        else '<p class="small muted">none</p>'
    )
    primer = trace.get("primer") or {}
    folds = (
        _table(
            ["fold", "reports", "status", "score", "calls", "prompt tokens", "follow-ups"],
            [
                [
                    f.get("fold"),
                    ", ".join(map(str, f.get("reports") or [])),
                    f.get("status"),
                    f.get("score"),
                    f.get("calls"),
                    f.get("prompt_tokens"),
                    len(f.get("follow_ups") or []),
                ]
                for f in primer.get("folds") or []
            ],
        )
        if primer.get("folds")
        else ""
    )
    hyde = trace.get("hyde") or {}
    red = trace.get("reduce") or {}
    reduce_line = (
        f"reduce {_badge(red.get('status'))} over steps {_esc(', '.join(map(str, red.get('steps') or [])))} "
        f"\u00b7 {_esc(red.get('tokens'))} tokens"
        + (f" \u00b7 dropped {_esc(red.get('dropped'))}" if red.get("dropped") else "")
        if red
        else "no reduce"
    )
    counts = {k: sum(1 for s in steps if s.get("status") == k) for k in ("done", "failed", "uncovered")}
    return (
        '<section class="card" id="drift"><h2>DRIFT steps</h2><p class="stop">stop reason: '
        f"{_badge(ret.get('stop_reason'), 'mode')}</p>{_stop_evidence(trace.get('stop'))}"
        f'<div class="meta">{len(steps)} steps: '
        f"{counts['done']} done, {counts['failed']} failed, "
        f"{counts['uncovered']} uncovered \u00b7 seed {_esc(ret.get('seed', params.get('seed')))} \u00b7 max depth "
        f"{_esc(params.get('max_depth'))} \u00b7 sufficient score {_esc(sufficient)} \u00b7 min gain "
        f"{_esc(params.get('min_score_gain'))} \u00b7 HyDE {_badge(hyde.get('status') or 'none', hyde.get('status'))}"
        f"</div>{tree}<h3>uncovered follow-ups ({len(uncovered)})</h3>{unc}<h3>dropped follow-ups ({len(dropped)})"
        f"</h3>{drop}<h3>primer</h3>{folds}<p class='small'>{reduce_line}</p></section>"
    )


def _pair(p: dict[str, Any]) -> str:
    facts = [f"evidence overlap {p.get('evidence_overlap')}"]
    if p.get("similarity") is not None:
        facts.append(f"similarity {p.get('similarity')}")
    if p.get("shared"):
        facts.append(f"shared {', '.join(map(str, p['shared']))}")
    measures = " and ".join(map(str, p.get("measures") or []))
    verb = f" agree by {measures}" if measures else ""
    return f"{p.get('a')} and {p.get('b')}{verb} ({'; '.join(facts)})"


def _stop_evidence(stop: Any) -> str:
    """Why the run stopped (``trace.stop``, stored since issue 37): the sufficient check after every epoch, with
    the claim, the answers that could corroborate it and the pairs that agreed (or came closest)."""
    if not isinstance(stop, dict) or not stop:
        return ""
    rule = stop.get("rule") or {}
    rows = []
    for c in stop.get("checks") or []:
        claim = c.get("claim") or {}
        agreed = [_pair(p) for p in c.get("agreed") or []]
        more = (c.get("agreed_total") or 0) - len(agreed)
        if more > 0:
            agreed.append(f"{more} more")
        closest = c.get("closest")
        rows.append(
            [
                f"epoch {c.get('depth')}",
                "yes" if c.get("sufficient") else "no",
                f"{claim.get('step')} {claim.get('score')}" if claim else DASH,
                ", ".join(map(str, c.get("grounded") or [])) or DASH,
                ", ".join(map(str, c.get("failed") or [])) or DASH,
                c.get("compared"),
                "; ".join(agreed) or (f"closest: {_pair(closest)}" if isinstance(closest, dict) else DASH),
                c.get("note"),
            ]
        )
    table = _table(
        ["check", "sufficient", "best claim", "grounded answers", "failed", "pairs", "agreement", "note"], rows
    )
    failed = stop.get("failed_steps") or []
    return (
        f'<div id="stop-evidence"><p class="small">{_esc(stop.get("summary"))} \u00b7 sufficient needs a score of '
        f"{_esc(rule.get('sufficient_score'))} corroborated by another grounded answer: evidence overlap \u2265 "
        f"{_esc(rule.get('agree_evidence'))} or answer similarity \u2265 {_esc(rule.get('agree_similarity'))}"
        + (f" \u00b7 failed steps (scores not counted): {_esc(', '.join(map(str, failed)))}" if failed else "")
        + f"</p>{table}</div>"
    )


def global_card(ret: dict[str, Any], trace: dict[str, Any], graph: dict[str, Any]) -> str:
    """Selection summary, the report tree (parents from the graph's PARENT links), batches, key points."""
    sel = trace.get("selection") or {}
    reports = list(trace.get("reports") or [])
    titles = {str(r["id"]): r.get("title") or str(r["id"]) for r in reports}
    parent_of: dict[str, str | None] = {}
    for link in graph.get("links") or []:
        if link.get("type") == "PARENT":
            parent_of[str(link["source"])] = str(link["target"])
    reports.sort(key=lambda r: (r.get("level") or 0, r.get("community") if r.get("community") is not None else 0))

    def line(r: dict[str, Any]) -> str:
        facts = [
            ("level", r.get("level")),
            ("community", r.get("community")),
            ("rating", r.get("rating")),
            ("batch", r.get("batch")),
            ("short id", r.get("short_id")),
            ("tokens", r.get("tokens")),
            ("points", f"{r.get('used_points', 0)}/{r.get('points', 0)} used" if r.get("points") else None),
        ]
        meta = " \u00b7 ".join(f"{k} {_esc(v)}" for k, v in facts if v is not None)
        return (
            f'<span data-report-id="{_esc(r.get("id"))}">{_badge(r.get("stage"))}{_badge(r.get("status") or "dropped")}'
            f'<span class="q">{_esc(r.get("title"))}</span> <span class="small muted">{meta}'
            + (f" \u00b7 <b>{_esc(r.get('reason'))}</b>" if r.get("reason") else "")
            + "</span></span>"
        )

    tree = _tree(reports, parent_of, line, "reports") if reports else '<p class="muted">no reports visited</p>'
    rounds = "; ".join(
        f"depth {r.get('depth')}: rated {r.get('rated')}, kept {r.get('kept')}" for r in sel.get("rounds") or []
    )
    batches = _table(
        ["batch", "reports (short ids)", "tokens", "calls", "points", "skipped", "repaired", "malformed", "error"],
        [
            [
                b.get("batch"),
                ", ".join(map(str, b.get("reports") or [])),
                b.get("tokens"),
                b.get("calls"),
                b.get("points"),
                b.get("skipped_points"),
                b.get("repaired"),
                b.get("malformed"),
                b.get("error"),
            ]
            for b in trace.get("batches") or []
        ],
    )
    points = _table(
        ["rank", "point", "score", "tokens", "reports", "cited", "status", "reason"],
        [
            [
                p.get("rank"),
                p.get("point"),
                p.get("score"),
                p.get("tokens"),
                "; ".join(titles.get(str(x), str(x)) for x in p.get("reports") or []),
                p.get("cited"),
                p.get("status"),
                p.get("reason"),
            ]
            for p in trace.get("points") or []
        ],
    )
    params = ret.get("params") or {}
    return (
        f'<section class="card" id="global"><h2>Global search: reports</h2><p class="stop">stop reason: '
        f'{_badge(ret.get("stop_reason"), "mode")}</p><div class="meta">selection <b>{_esc(sel.get("mode"))}</b> at '
        f"level {_esc(sel.get('level'))} \u00b7 {_esc(sel.get('selected'))} selected of {_esc(sel.get('visited'))} "
        f"visited \u00b7 rate calls {_esc(sel.get('rate_calls', 0))} \u00b7 rate threshold "
        f"{_esc(params.get('rate_threshold'))} \u00b7 min point score {_esc(params.get('min_score'))}"
        + (f" \u00b7 {_esc(rounds)}" if rounds else "")
        + f"</div>{tree}<h3>map batches</h3>{batches}<h3>key points ({len(trace.get('points') or [])})</h3>{points}"
        "</section>"
    )
