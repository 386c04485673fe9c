"""HTML: the page's main text without navigation, headers, footers or sidebars (trafilatura), cut into sections
at its headings.

trafilatura finds the main content and hands it back as XML in which headings keep their level
(``<head rend="h2">``), so the heading path of every paragraph is known without a second parse of the page.
It takes bytes and finds the encoding itself (meta charset, then detection).
"""

from __future__ import annotations

from typing import Any
from xml.etree import ElementTree

from driftgraph.index.formats.base import Extracted, Unreadable, needs
from driftgraph.index.formats.place import assemble, heading_sections


def read(data: bytes) -> Extracted:
    try:
        import trafilatura
    except ImportError:
        raise needs("trafilatura") from None
    xml = trafilatura.extract(
        data,
        output_format="xml",
        include_comments=False,
        include_tables=True,
        include_images=False,
        include_links=False,
        deduplicate=False,
    )
    if not xml:
        raise Unreadable("no main text found in the HTML page")
    try:
        root = ElementTree.fromstring(xml)
    except ElementTree.ParseError as err:  # pragma: no cover - trafilatura writes well-formed XML
        raise Unreadable(f"unreadable extraction of the HTML page: {err}") from None
    main = root.find("main")
    text, spans = assemble(heading_sections(_blocks(main if main is not None else root)))
    if not text:
        raise Unreadable("no main text found in the HTML page")
    return Extracted(text, spans)


def _blocks(main: Any) -> list[tuple[int, str]]:
    """``(heading level or 0, text)`` per top-level element of trafilatura's ``<main>``: a table row by row, a list
    item by item, anything else as one line."""
    out: list[tuple[int, str]] = []
    for el in main:
        if el.tag == "table":
            rows = (" | ".join(_line(cell) for cell in row) for row in el.iter("row"))
            out.append((0, "\n".join(r for r in rows if r.strip(" |"))))
        elif el.tag == "list":
            out.append((0, "\n".join(_line(item) for item in el.iter("item"))))
        elif el.tag == "head":
            rend = el.get("rend") or ""
            # h1-h6 keep their level; a heading trafilatura found without one nests under the level-1 heading
            out.append((int(rend[1]) if len(rend) == 2 and rend[1].isdigit() else 2, _line(el)))
        else:
            out.append((0, _line(el)))
    return out


def _line(el: Any) -> str:
    return " ".join("".join(el.itertext()).split())
