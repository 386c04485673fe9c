"""The retrieved subgraph of one stored retrieval, read for the HTML page (``page.render_page``).

Two parameterised statements, ``cypher/view/subgraph`` (nodes with their text, and the links among them)
and ``cypher/view/steps`` (the DRIFT step tree, which ``read_trace`` does not return). Bounded: at most
``max_nodes`` nodes come back, included ones first; the rest are only counted (``not_drawn``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from driftgraph.store.db import Store

MAX_NODES = 300
MAX_TEXT = 2000
MAX_STEPS = 1000
KINDS = ("entity", "chunk", "report", "claim")


def fetch_subgraph(
    store: Store,
    retrieval_id: str,
    max_nodes: int = MAX_NODES,
    *,
    max_text: int = MAX_TEXT,
    max_steps: int = MAX_STEPS,
) -> dict[str, Any]:
    """``{nodes, links, total, not_drawn, steps}`` for ``render_page``; two read round trips.

    ``nodes``: ``{id, kind, label, text, status, sources, rank, own, ...}`` (``own`` False: the node is only an
    endpoint of a relationship item). ``links``: ``{source, target, type, id, status}``, where ``status`` is
    the relationship item's verdict for a RELATED link that was an item, else None. ``steps``: the DRIFT step
    tree (empty for other modes). An unknown id gives an empty graph, not an error (``read_trace`` decides).
    """
    if max_nodes < 0:
        raise ValueError(f"max_nodes must be >= 0, got {max_nodes}")
    rows = store.read("view/subgraph", id=retrieval_id, max_nodes=max_nodes, max_text=max_text)
    if not rows:
        return {"nodes": [], "links": [], "total": 0, "not_drawn": 0, "steps": []}
    row = rows[0]
    nodes = [_node(n) for n in row["nodes"]]
    links = _links(row["links"], _verdicts(row["relationship_items"]))
    steps = store.read("view/steps", id=retrieval_id, max_text=max_text, max_steps=max_steps)
    total = int(row["total"])
    return {"nodes": nodes, "links": links, "total": total, "not_drawn": total - len(nodes), "steps": steps}


def _node(raw: dict[str, Any]) -> dict[str, Any]:
    """Drop the None-valued optional keys so the page's embedded JSON stays small."""
    keep = {"id", "kind", "label", "text", "status"}
    node = {k: v for k, v in raw.items() if k in keep or v is not None}
    node["label"] = str(node.get("label") or node["id"])
    node["text"] = node.get("text") or ""
    return node


def _verdicts(items: list[dict[str, Any]]) -> dict[str, str]:
    """Relationship item id -> included/dropped (included wins when both were recorded)."""
    out: dict[str, str] = {}
    for item in items:
        if item.get("id") and out.get(item["id"]) != "included":
            out[item["id"]] = item["status"]
    return out


def _links(raw: list[dict[str, Any]], verdicts: dict[str, str]) -> list[dict[str, Any]]:
    """De-duplicated, sorted links (a stable order keeps the page's layout deterministic)."""
    seen: set[tuple[str, str, str]] = set()
    out: list[dict[str, Any]] = []
    for link in raw:
        key = (link["source"], link["target"], link["type"])
        if key in seen or link["source"] == link["target"]:
            continue
        seen.add(key)
        status = verdicts.get(link.get("id") or "") if link["type"] == "RELATED" else None
        out.append({**link, "status": status})
    out.sort(key=lambda lk: (lk["type"], lk["source"], lk["target"]))
    return out
