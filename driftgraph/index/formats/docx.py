"""DOCX: paragraphs and tables in body order (python-docx), cut into sections at Word's heading styles.

A paragraph is a heading of level N when its style, or a style it is based on, is ``Heading N`` (so a custom
heading style derived from Word's keeps its level). Tables read row by row, cells joined by `` | ``.
"""

from __future__ import annotations

import io
import re
import zipfile
from typing import Any

from driftgraph.index.formats.base import Extracted, Unreadable, needs
from driftgraph.index.formats.place import assemble, heading_sections

_HEADING_STYLE = re.compile(r"^heading ([1-9])$", re.IGNORECASE)
OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # an encrypted Office file (or a legacy .doc/.ppt) is an OLE file


def read(data: bytes) -> Extracted:
    try:
        import docx
        from docx.opc.exceptions import PackageNotFoundError
    except ImportError:
        raise needs("python-docx") from None
    refuse_ole(data, "DOCX")
    try:
        document = docx.Document(io.BytesIO(data))
        blocks = [_block(item) for item in document.iter_inner_content()]
    except (zipfile.BadZipFile, KeyError, ValueError, PackageNotFoundError) as err:
        raise Unreadable(f"corrupt DOCX: {type(err).__name__}: {err}") from None
    text, spans = assemble(heading_sections(blocks))
    if not text:
        raise Unreadable("DOCX without text")
    return Extracted(text, spans)


def refuse_ole(data: bytes, kind: str) -> None:
    if data.startswith(OLE_MAGIC):
        raise Unreadable(f"encrypted {kind} (or a legacy binary Office file): save it unprotected as {kind.lower()}")


def _block(item: Any) -> tuple[int, str]:
    """``(heading level or 0, text)`` of a paragraph or a table."""
    if hasattr(item, "rows"):  # a table
        rows = [" | ".join(cell.text.strip() for cell in row.cells) for row in item.rows]
        return 0, "\n".join(r for r in rows if r.strip(" |"))
    return _level(item.style), item.text


def _level(style: Any) -> int:
    seen = 0
    while style is not None and seen < 10:  # base_style chains are short; a cycle in a broken file is not
        m = _HEADING_STYLE.match(style.name or "")
        if m is not None:
            return int(m.group(1))
        style, seen = style.base_style, seen + 1
    return 0
