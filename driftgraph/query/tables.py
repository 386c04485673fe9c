"""Context tables with short ids, and the citation check after the answer.

Each source is one table: a header (``-----Sources-----`` and a column line) and one row per item, its short
id first. Every part ends with a line break and the next begins with a non-space character, so with
cl100k-style tokenizers the token count of the whole context is exactly the sum of its parts: the fill can
budget item by item and the final check (``count_tokens`` of the rendered text) confirms it.
Citations look like ``[Data: Sources (3, 7); Reports (2, +more)]`` and are mapped back to real ids.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from driftgraph.query.budget import Candidate

SECTION_TITLES = {
    "report": "Reports",
    "entity": "Entities",
    "relationship": "Relationships",
    "claim": "Claims",
    "chunk": "Sources",
}
COLUMNS = {
    "report": "id|title|content",
    "entity": "id|entity|description|number of relationships",
    "relationship": "id|source|target|description|weight",
    "claim": "id|entity|object|type|status|description|start|end",
    "chunk": "id|text",
}


def header(source: str) -> str:
    return f"-----{SECTION_TITLES[source]}-----\n{COLUMNS[source]}\n"


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def row(source: str, short_id: int, p: Mapping[str, Any]) -> str:
    """One table row (line break included). Chunk text is kept verbatim so it can be found in the context."""
    if source == "chunk":
        cells = [p.get("text")]
    elif source == "entity":
        cells = [p.get("title"), p.get("description"), p.get("degree")]
    elif source == "relationship":
        cells = [p.get("source"), p.get("target"), p.get("description"), p.get("weight")]
    elif source == "report":
        cells = [p.get("title"), p.get("full_content")]
    elif source == "claim":
        cells = [
            p.get("subject"),
            p.get("object"),
            p.get("type"),
            p.get("status"),
            p.get("description"),
            p.get("start_date"),
            p.get("end_date"),
        ]
    else:
        raise ValueError(f"unknown source {source!r}")
    return "|".join([str(short_id), *(_cell(c) for c in cells)]) + "\n"


def render(included: Iterable[Candidate], order: list[str]) -> str:
    """The context text: one table per source in route order, rows in rank order."""
    by_source: dict[str, list[Candidate]] = {}
    for c in included:
        by_source.setdefault(c.source, []).append(c)
    parts: list[str] = []
    for source in [*order, *(s for s in by_source if s not in order)]:
        items = sorted(by_source.get(source, ()), key=lambda c: c.rank)
        if items:
            parts.append(header(source))
            parts.extend(c.payload["row"] for c in items)
    return "".join(parts)


def id_map(included: Iterable[Candidate]) -> dict[str, dict[int, str]]:
    """Section title -> short id -> real id, for the citation check."""
    out: dict[str, dict[int, str]] = {}
    for c in included:
        out.setdefault(SECTION_TITLES[c.source], {})[c.rank] = c.id
    return out
