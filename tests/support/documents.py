"""Small document files the format tests write themselves: PDF (by hand: text pages, an image-only page, and
encrypted through pypdf), DOCX and PPTX (python-docx, python-pptx), and an HTML page with boilerplate."""

from __future__ import annotations

import io
import zlib
from collections.abc import Sequence
from pathlib import Path


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def pdf_bytes(pages: Sequence[Sequence[str]], *, image_only: bool = False) -> bytes:
    """A valid PDF: one page per item, each line a Helvetica text line (``image_only``: a grey image per page and
    no text operator at all, the shape of a scan without OCR)."""
    objects: list[bytes] = []

    def add(body: bytes) -> int:
        objects.append(body)
        return len(objects)

    catalog = add(b"")  # filled in below, once the page tree's number is known
    tree = add(b"")
    font = add(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    kids = []
    for lines in pages:
        if image_only:
            pixels = zlib.compress(bytes([128]) * 64)
            image = add(
                b"<< /Type /XObject /Subtype /Image /Width 8 /Height 8 /ColorSpace /DeviceGray /BitsPerComponent 8"
                b" /Filter /FlateDecode /Length %d >>\nstream\n" % len(pixels) + pixels + b"\nendstream"
            )
            ops = b"q 400 0 0 400 100 300 cm /Im1 Do Q"
            resources = b"<< /XObject << /Im1 %d 0 R >> >>" % image
        else:
            body = b"".join(b"(%s) Tj T* " % _escape(line).encode("cp1252") for line in lines)
            ops = b"BT /F1 12 Tf 14 TL 72 720 Td " + body + b"ET"
            resources = b"<< /Font << /F1 %d 0 R >> >>" % font
        content = add(b"<< /Length %d >>\nstream\n" % len(ops) + ops + b"\nendstream")
        kids.append(
            add(
                b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Resources %s /Contents %d 0 R >>"
                % (tree, resources, content)
            )
        )
    objects[catalog - 1] = b"<< /Type /Catalog /Pages %d 0 R >>" % tree
    refs = b" ".join(b"%d 0 R" % k for k in kids)
    objects[tree - 1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (refs, len(kids))
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for n, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % n + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, catalog, xref)
    return bytes(out)


def encrypted_pdf(pages: Sequence[Sequence[str]], password: str = "s3cret") -> bytes:
    """``pdf_bytes`` encrypted with a user password (RC4-128: pypdf writes it without a crypto library)."""
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(pdf_bytes(pages))))
    writer.encrypt(user_password=password, owner_password=password + "-owner", algorithm="RC4-128")
    buf = io.BytesIO()
    writer.write(buf)
    return buf.getvalue()


def write_docx(path: Path, blocks: Sequence[tuple[int, str]]) -> Path:
    """``(level, text)``: level 1-3 a Word heading, 0 a body paragraph."""
    import docx

    document = docx.Document()
    for level, text in blocks:
        if level:
            document.add_heading(text, level=level)
        else:
            document.add_paragraph(text)
    document.save(str(path))
    return path


def write_pptx(path: Path, slides: Sequence[tuple[str, str]]) -> Path:
    """``(title, body)`` per slide, on the title-and-content layout."""
    from pptx import Presentation

    deck = Presentation()
    for title, body in slides:
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text = body
    deck.save(str(path))
    return path


BOILERPLATE = ("Careers menu", "Subscribe to our newsletter", "Copyright 2024 Harbor Corp")


def html_page(sections: Sequence[tuple[int, str]]) -> str:
    """An article between a navigation bar, a sidebar and a footer whose texts (``BOILERPLATE``) must not be
    indexed; ``(level, text)`` as in ``write_docx``."""
    body = "\n".join(f"<h{lvl}>{text}</h{lvl}>" if lvl else f"<p>{text}</p>" for lvl, text in sections)
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>Harbor operations</title></head><body>
<header><nav><a href="/">Home</a> | <a href="/about">About us</a> | <a href="/jobs">{BOILERPLATE[0]}</a></nav></header>
<aside class="sidebar"><p>{BOILERPLATE[1]} for weekly harbor news.</p></aside>
<main><article>
{body}
</article></main>
<footer><p>{BOILERPLATE[2]}. Privacy policy. Cookie settings.</p></footer>
</body></html>
"""
