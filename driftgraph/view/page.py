"""``render_page``: one stored retrieval as a single self-contained HTML file (inline CSS, JS and SVG).

Pure: it reads only its two arguments, what ``read_trace`` returned and what ``fetch_subgraph`` returned,
so it can be tested on saved fixtures and called by a CLI command or a server alike. Nothing is fetched
from the network when the page is opened. Every text from the database goes through ``html.escape`` (or
into the JSON blob, whose ``<``, ``>`` and ``&`` are escaped so no ``</script>`` can end it early).
"""

from __future__ import annotations

import json
from html import escape
from typing import Any

from driftgraph.view import sections
from driftgraph.view.assets import CSS, JS
from driftgraph.view.svg import render_svg

PAGE_SIZE = 200
COLUMNS: list[dict[str, Any]] = [
    {"key": "n", "label": "#", "num": True},
    {"key": "source", "label": "source"},
    {"key": "rank", "label": "rank", "num": True},
    {"key": "label", "label": "item"},
    {"key": "location", "label": "location"},  # a chunk's page, slide or heading path
    {"key": "id", "label": "id"},
    {"key": "status", "label": "status"},
    {"key": "reason", "label": "reason"},
    {"key": "tokens", "label": "tokens", "num": True},
    {"key": "score", "label": "score", "num": True},
    {"key": "hop", "label": "hop"},
    {"key": "via", "label": "via"},
]
SOURCES = ("chunk", "entity", "relationship", "claim", "report")


def script_json(value: Any) -> str:
    """JSON safe inside ``<script>``: no ``</script>``, ``<!--`` or line separators can break out of it."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    for char, code in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(char, code)
    return text


def render_page(retrieval: dict[str, Any], graph: dict[str, Any]) -> str:
    """The whole page as a string; ``retrieval`` is ``read_trace(...)``, ``graph`` is ``fetch_subgraph(...)``."""
    ret = dict(retrieval.get("retrieval") or retrieval)
    trace = ret.get("trace") or {}
    mode = str(ret.get("mode") or "?")
    labels = item_labels(trace, graph)
    items = table_rows(trace, labels)
    included_ids = sorted({str(it["id"]) for it in items if it["status"] == "included"})
    data = {
        "items": items,
        "columns": COLUMNS,
        "page_size": PAGE_SIZE,
        "node_of": relationship_starts(graph),
    }
    present = [s for s in SOURCES if any(it["source"] == s for it in items)]
    side = sections.budget_card(ret, trace, items) + sections.route_card(trace)
    body = [
        sections.header(ret, trace),
        '<div class="grid">' + graph_card(graph) + f"<div>{side}</div></div>",
    ]
    if mode == "drift":
        body.append(sections.drift_card(ret, trace, graph))
    if mode == "global":
        body.append(sections.global_card(ret, trace, graph))
    body.append(sections.entry_card(ret, trace, labels))
    body.append(items_card(items, present, included_ids))
    body.append(sections.cost_card(ret, trace))
    title = f"driftgraph {mode} retrieval {ret.get('id', '')}: {ret.get('query', '')}"
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
        "script-src 'unsafe-inline'; img-src data:\">"
        f"<title>{escape(title[:200])}</title><style>{CSS}</style></head>\n<body><main>\n"
        + "\n".join(body)
        + f'\n<script type="application/json" id="dg-data">{script_json(data)}</script>'
        f"\n<script>{JS}</script>\n</main></body></html>\n"
    )


def item_labels(trace: dict[str, Any], graph: dict[str, Any]) -> dict[str, str]:
    """A readable name per item id: node labels, ``A -> B`` for relationships, entry and report titles."""
    out: dict[str, str] = {}
    nodes = {str(n["id"]): n for n in graph.get("nodes") or []}
    for nid, node in nodes.items():
        out[nid] = str(node.get("label") or nid)
    for link in graph.get("links") or []:
        if link.get("type") == "RELATED" and link.get("id"):
            a = out.get(link["source"], link["source"])
            b = out.get(link["target"], link["target"])
            out.setdefault(str(link["id"]), f"{a} \u2192 {b}")
    for cand in trace.get("entry") or []:
        if cand.get("title"):
            out.setdefault(str(cand["id"]), str(cand["title"]))
    for rep in trace.get("reports") or []:
        if rep.get("title"):
            out.setdefault(str(rep["id"]), str(rep["title"]))
    return out


def relationship_starts(graph: dict[str, Any]) -> dict[str, str]:
    """Relationship item id -> its start node, so hovering a row can light the node up."""
    return {
        str(lk["id"]): str(lk["source"])
        for lk in graph.get("links") or []
        if lk.get("type") == "RELATED" and lk.get("id")
    }


def table_rows(trace: dict[str, Any], labels: dict[str, str]) -> list[dict[str, Any]]:
    """The items as the table's rows (``n`` keeps the trace order as the default sort)."""
    rows = []
    for n, item in enumerate(trace.get("items") or [], 1):
        iid = str(item.get("id"))
        rows.append(
            {
                "n": n,
                "source": item.get("source"),
                "rank": item.get("rank"),
                "label": labels.get(iid, ""),
                "location": item.get("location"),
                "id": iid,
                "status": item.get("status") or "dropped",
                "reason": item.get("reason"),
                "tokens": item.get("tokens"),
                "score": item.get("score"),
                "hop": item.get("hop"),
                "via": item.get("via"),
            }
        )
    return rows


def graph_card(graph: dict[str, Any]) -> str:
    """The SVG with its legend and how many nodes were left out by ``max_nodes``."""
    nodes = graph.get("nodes") or []
    not_drawn = int(graph.get("not_drawn") or 0)
    kinds = sorted({str(n.get("kind")) for n in nodes})
    counts = ", ".join(f"{sum(1 for n in nodes if n.get('kind') == k)} {escape(k)}" for k in kinds)
    incl = sum(1 for n in nodes if n.get("status") == "included")
    note = f" \u00b7 <b>{not_drawn}</b> more not drawn" if not_drawn else ""
    legend = (
        '<div class="legend small">'
        + "".join(
            f'<span><svg width="12" height="12" viewBox="-6 -6 12 12" class="k-{k}"><circle class="shape" r="5" '
            f'style="fill:var(--{k});stroke:var(--{k})"/></svg> {k}</span>'
            for k in ("entity", "chunk", "report", "claim")
        )
        + "<span>filled = included, hollow dashed = dropped</span>"
        + '<span><i style="background:#334e68"></i>relationship in context</span>'
        + '<span><i style="background:#f07575"></i>relationship dropped</span></div>'
    )
    svg = render_svg(graph) if nodes else '<p class="muted">no subgraph (no nodes given)</p>'
    return (
        f'<section class="card" id="graph"><h2>Retrieved subgraph</h2><div class="meta">{len(nodes)} nodes '
        f"({counts or 'none'}), {incl} included, {len(graph.get('links') or [])} links{note} \u00b7 hover a node "
        f"for its text, click it to filter the table</div>{svg}{legend}</section>"
    )


def items_card(items: list[dict[str, Any]], present: list[str], included_ids: list[str]) -> str:
    """The table shell; rows come from the JSON blob (paged by the script), ids also in a hidden list."""
    n_inc = len(included_ids)
    head = "".join(
        f'<th data-key="{c["key"]}"{" class=num" if c.get("num") else ""}>{escape(c["label"])}</th>' for c in COLUMNS
    )
    sources = "".join(f'<option value="{escape(s)}">{escape(s)}</option>' for s in present)
    hidden = "".join(f'<li data-item-id="{escape(i)}">{escape(i)}</li>' for i in included_ids)
    dropped = sum(1 for it in items if it["status"] == "dropped")
    return (
        f'<section class="card" id="items"><h2>Items</h2><div class="meta"><b>{len(items)}</b> candidates: '
        f"<b>{n_inc}</b> included, <b>{dropped}</b> dropped \u00b7 click a header to sort</div>"
        '<div class="controls" style="margin-top:8px"><input id="f-q" type="search" placeholder="filter: id, item, '
        'reason, hop\u2026" aria-label="text filter"><select id="f-status" aria-label="status"><option value="all">'
        'all statuses</option><option value="included">included</option><option value="dropped">dropped</option>'
        f'</select><select id="f-source" aria-label="source"><option value="all">all sources</option>{sources}'
        '</select><span class="pager"><button id="p-prev" type="button">\u2039 prev</button> <span id="p-label">'
        '</span> <button id="p-next" type="button">next \u203a</button></span><span class="count" id="f-count">'
        f"</span></div><table><thead><tr>{head}</tr></thead><tbody></tbody></table>"
        f'<ul id="included-ids" hidden>{hidden}</ul>'
        "<noscript><p>The table needs JavaScript; the included ids are listed in the page source.</p></noscript>"
        "</section>"
    )
