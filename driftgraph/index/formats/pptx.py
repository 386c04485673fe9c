"""PPTX: the text of each slide (python-pptx), one section per slide, numbered 1.. in deck order.

A slide's title comes first, then its other shapes top to bottom, left to right (the reading order of a slide,
which the file's z-order is not); grouped shapes and tables are read through. Speaker notes are left out: they
are not what the audience saw, so a citation of "slide 3" should not rest on them.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterable, Iterator
from typing import Any

from driftgraph.index.formats.base import Extracted, Unreadable, needs
from driftgraph.index.formats.docx import refuse_ole
from driftgraph.index.formats.place import Place, Section, assemble


def read(data: bytes) -> Extracted:
    try:
        from pptx import Presentation
        from pptx.exc import PackageNotFoundError
    except ImportError:
        raise needs("python-pptx") from None
    refuse_ole(data, "PPTX")
    try:
        deck = Presentation(io.BytesIO(data))
        slides = [_slide_text(slide) for slide in deck.slides]
    except (zipfile.BadZipFile, KeyError, ValueError, PackageNotFoundError) as err:
        raise Unreadable(f"corrupt PPTX: {type(err).__name__}: {err}") from None
    text, spans = assemble(Section(t, Place("slide", number=n)) for n, t in enumerate(slides, start=1))
    if not text:
        raise Unreadable(f"no text on any of its {len(slides)} slides")
    return Extracted(text, spans, {"slides": len(slides)})


def _slide_text(slide: Any) -> str:
    title = slide.shapes.title
    rest = sorted(
        (s for s in slide.shapes if title is None or s.shape_id != title.shape_id),
        key=lambda s: (s.top or 0, s.left or 0),
    )
    parts = [t for shape in ([title] if title is not None else []) + rest for t in _texts([shape])]
    return "\n".join(p for p in parts if p)


def _texts(shapes: Iterable[Any]) -> Iterator[str]:
    for shape in shapes:
        if getattr(shape, "shape_type", None) is not None and hasattr(shape, "shapes"):  # a group
            yield from _texts(shape.shapes)
        elif getattr(shape, "has_table", False):
            for row in shape.table.rows:
                yield " | ".join(cell.text.strip() for cell in row.cells)
        elif getattr(shape, "has_text_frame", False):
            yield shape.text_frame.text.strip()
