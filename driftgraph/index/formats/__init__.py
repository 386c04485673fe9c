"""Readers of binary and markup formats (PDF, DOCX, PPTX, HTML), each returning text with the place of every
part (page, slide, heading path); index/load.py keeps reading the plain-text formats itself.

The libraries are the ``documents`` extra (``pip install 'driftgraph[documents]'``); each is imported when its
first file is read, so without it a file of that format is skipped with a reason naming the extra, and the rest
of the folder is indexed. Why these libraries: docs/guides/indexing.md, "Formats".
"""

from __future__ import annotations

from collections.abc import Callable

from driftgraph.index.formats import docx, html, pdf, pptx
from driftgraph.index.formats.base import EXTRA, Extracted, Unreadable
from driftgraph.index.formats.markdown import heading_spans
from driftgraph.index.formats.place import Place, Span, describe, locate, spans_from_json, spans_json

Reader = Callable[[bytes], Extracted]
READERS: dict[str, Reader] = {
    "pdf": pdf.read,
    "docx": docx.read,
    "pptx": pptx.read,
    "html": html.read,
    "htm": html.read,
}

__all__ = [
    "EXTRA",
    "READERS",
    "Extracted",
    "Place",
    "Span",
    "Unreadable",
    "describe",
    "heading_spans",
    "locate",
    "spans_from_json",
    "spans_json",
]
