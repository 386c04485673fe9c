"""PDF: the text layer of each page (pypdf), one section per page, numbered 1.. in file order.

Page numbers are physical positions, not printed labels (a label can be roman, repeated or missing; the position
is what a viewer's "go to page" takes). A PDF with no text on any page is refused (a scan needs OCR first), as is
one that needs a password; an owner-password-only PDF (empty user password) opens as usual.
"""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from driftgraph.index.formats.base import Extracted, Unreadable, needs
from driftgraph.index.formats.place import Place, Section, assemble


def read(data: bytes) -> Extracted:
    try:
        import pypdf
        from pypdf.errors import PyPdfError
    except ImportError:
        raise needs("pypdf") from None
    try:
        with _quiet(logging.getLogger("pypdf")):
            pages = _pages(pypdf, data)
    except Unreadable:
        raise
    except PyPdfError as err:
        if "crypt" in str(err).lower() or "password" in str(err).lower():
            raise Unreadable(f"encrypted PDF: {err}") from None
        raise Unreadable(f"corrupt PDF: {err}") from None
    except Exception as err:  # pypdf raises plain ValueError/KeyError/... on some malformed files
        raise Unreadable(f"corrupt PDF: {type(err).__name__}: {err}") from None
    text, spans = assemble(Section(t, Place("page", number=n)) for n, t in enumerate(pages, start=1))
    if not text:
        raise Unreadable(f"no text layer on any of its {len(pages)} pages (scanned or image-only PDF?): OCR it first")
    return Extracted(text, spans, {"pages": len(pages)})


def _pages(pypdf: Any, data: bytes) -> list[str]:
    reader = pypdf.PdfReader(io.BytesIO(data))
    if reader.is_encrypted and reader.decrypt("") == pypdf.PasswordType.NOT_DECRYPTED:
        raise Unreadable("encrypted PDF (needs a password)")
    return [page.extract_text() or "" for page in reader.pages]


@contextmanager
def _quiet(logger: logging.Logger) -> Iterator[None]:
    """pypdf's warnings about repairing a sloppy file are off while it reads one (not the user's to fix, and they
    would break the progress bars); the logger's own level is restored after."""
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)
