"""The retrieved subgraph as inline SVG, laid out in Python so the page needs no script to show it.

The layout is a Fruchterman-Reingold force layout in numpy started from rings by kind, with a fixed seed:
the same graph always gives the same picture (diffable pages, stable screenshots). Every node is one ``<g>``
carrying ``data-node-id`` and a ``<title>`` (the hover text: label and the node's text from the database).
"""

from __future__ import annotations

import math
from html import escape
from typing import Any

import numpy as np

WIDTH, HEIGHT = 860, 600
MARGIN = 46
SEED = 7
KIND_RING = {"report": 1.0, "chunk": 0.72, "claim": 0.55, "entity": 0.35}
LABEL_ALL_BELOW = 90  # above this many nodes only included entities and reports are labelled
CHAR_W = 6.2  # average advance of a 10.5px sans-serif character, for label boxes


def layout(
    ids: list[str], kinds: list[str], edges: list[tuple[int, int]], width: int = WIDTH, height: int = HEIGHT
) -> np.ndarray:
    """Positions (n x 2) inside the box; deterministic for the same input (seeded jitter, fixed steps)."""
    n = len(ids)
    if n == 0:
        return np.zeros((0, 2))
    rng = np.random.default_rng(SEED)
    order = sorted(range(n), key=lambda i: (kinds[i], ids[i]))
    pos = np.zeros((n, 2))
    by_kind: dict[str, list[int]] = {}
    for i in order:
        by_kind.setdefault(kinds[i], []).append(i)
    for kind, members in by_kind.items():
        radius = KIND_RING.get(kind, 0.9)
        for j, i in enumerate(members):
            angle = 2 * math.pi * j / len(members) + radius
            pos[i] = (radius * math.cos(angle), radius * math.sin(angle))
    pos += rng.normal(0, 0.02, size=(n, 2))
    if n > 1:
        pos = _spread(_forces(pos, np.array(edges, dtype=int).reshape(-1, 2)))
    return _fit(pos, width, height)


def _spread(pos: np.ndarray) -> np.ndarray:
    """Even out the density: each node keeps its angle, its radius becomes its radius rank's quantile.

    A force layout packs the well-connected core tightly and flings leaves far out; after this the nodes fill
    the disc evenly, so the core is legible and no outlier decides the scale.
    """
    centred = pos - np.median(pos, axis=0)
    radius = np.linalg.norm(centred, axis=1)
    ranks = np.empty(len(pos))
    ranks[np.argsort(radius, kind="stable")] = np.arange(len(pos))
    target = np.sqrt((ranks + 0.5) / len(pos))
    angle = np.arctan2(centred[:, 1], centred[:, 0])
    return np.stack([target * np.cos(angle), target * np.sin(angle)], axis=1)


def _forces(pos: np.ndarray, edges: np.ndarray, iterations: int = 240) -> np.ndarray:
    """Repulsion between all pairs, attraction along edges, a little gravity for loose components.

    Coordinates are kept as two vectors and the pair terms as n x n matrices (no 3-d arrays, no norm calls):
    300 nodes take well under a second.
    """
    n = len(pos)
    k2 = (1.6 / math.sqrt(n)) ** 2
    x, y = pos[:, 0].copy(), pos[:, 1].copy()
    a, b = (edges[:, 0], edges[:, 1]) if len(edges) else (np.zeros(0, int), np.zeros(0, int))
    temp = 0.12
    for step in range(iterations):
        dx = x[:, None] - x[None, :]
        dy = y[:, None] - y[None, :]
        rep = k2 / np.maximum(dx * dx + dy * dy, 1e-6)
        fx = (rep * dx).sum(axis=1) - 0.35 * x
        fy = (rep * dy).sum(axis=1) - 0.35 * y
        if len(a):
            ex, ey = x[a] - x[b], y[a] - y[b]
            pull = np.sqrt(ex * ex + ey * ey) / math.sqrt(k2)
            fx -= np.bincount(a, pull * ex, n) - np.bincount(b, pull * ex, n)
            fy -= np.bincount(a, pull * ey, n) - np.bincount(b, pull * ey, n)
        size = np.maximum(np.sqrt(fx * fx + fy * fy), 1e-9)
        scale = np.minimum(size, temp) / size
        x, y = x + fx * scale, y + fy * scale
        temp = max(0.004, temp * (1 - 3.0 / iterations)) if step > iterations // 5 else temp
    return np.stack([x, y], axis=1)


def _fit(pos: np.ndarray, width: int, height: int) -> np.ndarray:
    lo, hi = pos.min(axis=0), pos.max(axis=0)
    span = np.where(hi - lo < 1e-9, 1.0, hi - lo)
    unit = (pos - lo) / span
    if np.all(hi - lo < 1e-9):
        unit[:] = 0.5
    box = np.array([width - 2 * MARGIN, height - 2 * MARGIN])
    out: np.ndarray = np.round(MARGIN + unit * box, 1)
    return out


def _shape(kind: str, size: float) -> str:
    if kind == "chunk":
        side = 2 * size
        return f'<rect class="shape" x="{-size:.1f}" y="{-size:.1f}" width="{side:.1f}" height="{side:.1f}" rx="2"/>'
    if kind == "report":
        pts = " ".join(
            f"{size * 1.15 * math.cos(math.pi / 3 * i):.1f},{size * 1.15 * math.sin(math.pi / 3 * i):.1f}"
            for i in range(6)
        )
        return f'<polygon class="shape" points="{pts}"/>'
    if kind == "claim":
        s = size * 1.2
        return f'<polygon class="shape" points="0,{-s:.1f} {s:.1f},0 0,{s:.1f} {-s:.1f},0"/>'
    return f'<circle class="shape" r="{size:.1f}"/>'


def _short(text: str, limit: int = 24) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def _place_labels(
    nodes: list[dict[str, Any]], kinds: list[str], pos: np.ndarray, sizes: list[float]
) -> dict[int, tuple[float, float, str]]:
    """Greedy label placement: included nodes first, each label tries right, left, above, below of its node
    and is left out (the hover text still names the node) when all four would overlap a label already placed.
    """
    placed: list[tuple[float, float, float, float]] = []
    out: dict[int, tuple[float, float, str]] = {}
    many = len(nodes) > LABEL_ALL_BELOW
    order = sorted(range(len(nodes)), key=lambda i: (nodes[i].get("status") != "included", -sizes[i], i))
    for i in order:
        included = nodes[i].get("status") == "included"
        if many and not (included and kinds[i] in ("entity", "report")):
            continue
        text = _short(str(nodes[i].get("label") or nodes[i]["id"]))
        w, r = len(text) * CHAR_W, sizes[i] + 3
        x, y = float(pos[i][0]), float(pos[i][1])
        for dx, dy, anchor in ((r, 3.5, "start"), (-r, 3.5, "end"), (0, -r - 2, "middle"), (0, r + 10, "middle")):
            left = x + dx - (w if anchor == "end" else w / 2 if anchor == "middle" else 0)
            box = (left, y + dy - 9.5, left + w, y + dy + 2.5)
            inside = box[0] >= 0 and box[2] <= WIDTH and box[1] >= 0 and box[3] <= HEIGHT
            if inside and not any(_overlap(box, b) for b in placed):
                placed.append(box)
                out[i] = (dx, dy, anchor)
                break
    return out


def _overlap(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def render_svg(graph: dict[str, Any]) -> str:
    """The ``<svg class="graph">``: links first (under), then one ``<g data-node-id>`` per node."""
    nodes = list(graph.get("nodes") or [])
    index = {str(nd["id"]): i for i, nd in enumerate(nodes)}
    links = [lk for lk in graph.get("links") or [] if lk["source"] in index and lk["target"] in index]
    ids = [str(nd["id"]) for nd in nodes]
    kinds = [str(nd.get("kind") or "other") for nd in nodes]
    edges = [(index[lk["source"]], index[lk["target"]]) for lk in links]
    pos = layout(ids, kinds, edges)
    degree = [0] * len(nodes)
    for a, b in edges:
        degree[a] += 1
        degree[b] += 1
    out = [
        f'<svg class="graph" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" '
        f'role="img" aria-label="retrieved subgraph, {len(nodes)} nodes">'
    ]
    for lk in links:
        (x1, y1), (x2, y2) = pos[index[lk["source"]]], pos[index[lk["target"]]]
        cls = f"e t-{escape(str(lk['type']))}" + (f" r-{escape(str(lk['status']))}" if lk.get("status") else "")
        out.append(f'<line class="{cls}" x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}"/>')
    sizes = [
        {"entity": 6.5 + min(6.0, degree[i] * 0.6), "chunk": 7.0, "report": 8.5, "claim": 6.0}.get(kinds[i], 6.0)
        for i in range(len(nodes))
    ]
    texts = _place_labels(nodes, kinds, pos, sizes)
    # included nodes last, so they are drawn on top of dropped ones
    for i in sorted(range(len(nodes)), key=lambda i: (nodes[i].get("status") == "included", i)):
        nd = nodes[i]
        kind, status = kinds[i], str(nd.get("status") or "dropped")
        x, y = pos[i]
        label = str(nd.get("label") or nd["id"])
        tip = f"{kind} \u00b7 {status}\n{label}\n\n{nd.get('text') or ''}".rstrip()
        out.append(
            f'<g class="n k-{escape(kind)} s-{escape(status)}" data-node-id="{escape(ids[i])}" '
            f'transform="translate({x},{y})"><title>{escape(tip)}</title>{_shape(kind, sizes[i])}'
        )
        if i in texts:
            dx, dy, anchor = texts[i]
            out.append(f'<text x="{dx:.1f}" y="{dy:.1f}" text-anchor="{anchor}">{escape(_short(label))}</text>')
        out.append("</g>")
    out.append("</svg>")
    return "".join(out)
