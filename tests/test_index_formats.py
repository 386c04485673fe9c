"""PDF, DOCX, PPTX and HTML into documents and chunks that know their page, slide or heading path; bad files are
skipped with one reason each. The files are written by the tests (tests/support/documents.py)."""

from __future__ import annotations

import builtins
import re

import pytest

from driftgraph.config import IndexConfig
from driftgraph.index.chunk import chunk_document, chunk_documents
from driftgraph.index.formats import READERS, Place, Span, describe, locate
from driftgraph.index.load import Document, document_id, load_documents
from tests.support.documents import BOILERPLATE, encrypted_pdf, html_page, pdf_bytes, write_docx, write_pptx

pytest.importorskip("pypdf")
pytest.importorskip("docx")
pytest.importorskip("pptx")
pytest.importorskip("trafilatura")

ENC = "cl100k_base"


def _page_lines(page: int, n: int) -> list[str]:
    """Lines whose words name their page (``p3w17``), so a chunk's text says which pages it holds."""
    return [" ".join(f"p{page}w{i * 8 + j}" for j in range(8)) + "." for i in range(n)]


def test_pdf_chunks_name_the_pages_their_text_came_from(tmp_path):
    """The location of every chunk equals the set of pages whose words it holds (a window across a page break
    says "pages 1-2"), at a chunk size that cuts pages in several pieces."""
    (tmp_path / "report.pdf").write_bytes(pdf_bytes([_page_lines(p, 6) for p in (1, 2, 3)]))
    doc = load_documents(tmp_path, IndexConfig()).documents[0]
    assert doc.metadata == {"path": "report.pdf", "pages": 3}
    assert [s.place.number for s in doc.spans] == [1, 2, 3]
    chunks = chunk_document(doc, 40, 8, ENC)
    assert len(chunks) > 6
    for c in chunks:
        pages = sorted({int(p) for p in re.findall(r"\bp(\d)", c.text)})
        assert c.location == (f"page {pages[0]}" if len(pages) == 1 else f"pages {pages[0]}-{pages[-1]}"), c.text
    assert any(c.location == "pages 1-2" for c in chunks) and any(c.location == "pages 2-3" for c in chunks)


def test_docx_pptx_html_and_markdown_carry_slides_and_heading_paths(tmp_path):
    write_docx(
        tmp_path / "ops.docx",
        [(0, "Harbor handbook."), (1, "Operations"), (0, "Cranes run every night at Port Ellis."),
         (2, "Storm recovery"), (0, "Crews of Marta Quill inspect every berth."), (1, "Staffing"),
         (0, "Twelve riggers staff the night shift.")],
    )  # fmt: skip
    write_pptx(tmp_path / "deck.pptx", [("Tides", "Spring tides at Ellis Bay."), ("Turbines", "Brightwater output.")])
    (tmp_path / "page.html").write_text(
        html_page(
            [(1, "Operations"), (0, "The harbor operations team runs the cranes at Port Ellis every night."),
             (2, "Storm recovery"), (0, "After a storm the crews of Marta Quill inspect every berth before dawn.")]
        ),
        encoding="utf-8",
    )  # fmt: skip
    (tmp_path / "notes.md").write_text(
        "Intro line.\n\n# Guide\n\nA.\n\n## Setup #\n\n```sh\n# not a heading\n```\nB.\n\n# Other\nC.\n",
        encoding="utf-8",
    )
    docs = {d.title: d for d in load_documents(tmp_path, IndexConfig()).documents}
    chunks = {t: chunk_document(d, 12, 0, ENC) for t, d in docs.items()}

    def where(title: str, needle: str) -> set[str]:
        """The heading paths listed by the chunks holding ``needle`` (a chunk across a heading lists both)."""
        return {p for c in chunks[title] if needle in c.text for p in (c.location or "").split("; ")}

    assert where("ops.docx", "Cranes") == {"Operations"}
    assert "Operations > Storm recovery" in where("ops.docx", "inspect")
    assert where("ops.docx", "riggers") == {"Staffing"}
    assert "Harbor handbook" not in " ".join(c.location or "" for c in chunks["ops.docx"])  # body text, no heading
    deck = docs["deck.pptx"]
    assert [(s.place.kind, s.place.number) for s in deck.spans] == [("slide", 1), ("slide", 2)]
    assert [c.location for c in chunks["deck.pptx"]][-1] == "slide 2"
    assert chunk_document(deck, 500, 0, ENC)[0].location == "slides 1-2"
    assert docs["deck.pptx"].text.startswith("Tides\nSpring tides")  # the title first, then the body
    assert where("page.html", "cranes") == {"Operations"}
    assert "Operations > Storm recovery" in where("page.html", "inspect")
    assert all(b not in docs["page.html"].text for b in (*BOILERPLATE, "About us", "Privacy policy"))
    md = docs["notes.md"]
    assert md.text.startswith("Intro line.")  # Markdown is indexed as written; only its spans are new
    assert [s.place.path for s in md.spans] == [("Guide",), ("Guide", "Setup"), ("Other",)]
    assert md.text[md.spans[1].start : md.spans[1].end].startswith("## Setup #\n\n```sh\n# not a heading")


def test_markdown_without_a_heading_is_read_with_no_sections(tmp_path):
    (tmp_path / "plain.md").write_text("Just a paragraph.\n\n```\n# in a fence\n```\n", encoding="utf-8")
    (doc,) = load_documents(tmp_path, IndexConfig()).documents
    assert doc.spans == () and doc.text.startswith("Just a paragraph.")


def test_bad_files_are_skipped_one_reason_each_and_the_rest_is_read(tmp_path):
    (tmp_path / "good.pdf").write_bytes(pdf_bytes([["Ellis harbor opens at dawn."]]))
    (tmp_path / "scan.pdf").write_bytes(pdf_bytes([["x"], ["y"]], image_only=True))
    (tmp_path / "locked.pdf").write_bytes(encrypted_pdf([["secret text"]]))
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4\n1 0 obj << /Type /Catalog >> garbage")
    (tmp_path / "broken.docx").write_bytes(b"PK\x03\x04 not really a zip")
    (tmp_path / "big.pdf").write_bytes(pdf_bytes([_page_lines(1, 200)]))
    (tmp_path / "empty.html").write_text("<html><body><nav>Home</nav></body></html>")
    rep = load_documents(tmp_path, IndexConfig(max_file_bytes=5000))
    assert [d.title for d in rep.documents] == ["good.pdf"]
    reasons = {s["path"]: s["reason"] for s in rep.skipped}
    assert len(rep.skipped) == len(reasons) == 6, rep.skipped
    assert reasons["scan.pdf"].startswith("no text layer on any of its 2 pages (scanned or image-only PDF?)")
    assert reasons["locked.pdf"] == "encrypted PDF (needs a password)"
    assert reasons["broken.pdf"].startswith("corrupt PDF: ")
    assert reasons["broken.docx"].startswith("corrupt DOCX: BadZipFile")
    assert re.fullmatch(r"\d+ bytes is over index\.max_file_bytes=5000", reasons["big.pdf"])
    assert reasons["empty.html"] == "no main text found in the HTML page"
    assert all("\n" not in r for r in reasons.values())


def test_an_encrypted_office_file_says_so(tmp_path):
    (tmp_path / "locked.docx").write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 600)
    rep = load_documents(tmp_path, IndexConfig())
    assert rep.skipped[0]["reason"].startswith("encrypted DOCX (or a legacy binary Office file)")


@pytest.mark.parametrize(
    ("ext", "library"), [("pdf", "pypdf"), ("docx", "docx"), ("pptx", "pptx"), ("html", "trafilatura")]
)
def test_a_missing_library_is_a_skip_reason_naming_the_extra(tmp_path, monkeypatch, ext, library):
    real_import = builtins.__import__

    def no_library(name, *args, **kwargs):
        if name == library or name.startswith(library + "."):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_library)
    (tmp_path / f"file.{ext}").write_bytes(b"anything")
    (tmp_path / "plain.txt").write_text("still indexed")
    rep = load_documents(tmp_path, IndexConfig())
    assert [d.title for d in rep.documents] == ["plain.txt"]
    assert rep.skipped == [{"path": f"file.{ext}", "reason": rep.skipped[0]["reason"]}]
    assert rep.skipped[0]["reason"].endswith("pip install 'driftgraph[documents]'")


def test_describe_and_locate():
    page = [Span(0, 10, Place("page", 3)), Span(12, 20, Place("page", 4)), Span(22, 30, Place("page", 6))]
    assert locate(page, 0, 10) == "page 3" and locate(page, 5, 15) == "pages 3-4" and locate(page, 0, 30) == "pages 3-6"
    assert locate(page, 10, 12) is None  # only the blank line between two pages
    paths = [Place("section", path=p) for p in [(), ("A",), ("A", "B"), ("C",), ("D",)]]
    assert describe(paths[:1]) is None
    assert describe(paths[:3]) == "A; A > B"
    assert describe(paths) == "A; …; D"
    assert describe([Place("slide", 2)]) == "slide 2"


def test_plain_text_chunks_are_unchanged_and_have_no_location():
    text = " ".join(f"word{i}" for i in range(200))
    doc = Document(document_id(text), "t.txt", text, {})
    chunks = chunk_documents([doc], 50, 10, ENC)
    assert all(c.location is None for c in chunks)
    spanned = Document(doc.id, "t.md", text, {}, (Span(0, len(text), Place("section", path=("H",))),))
    located = chunk_document(spanned, 50, 10, ENC)
    assert [(c.id, c.text) for c in located] == [(c.id, c.text) for c in chunks]  # places never move a chunk
    assert {c.location for c in located} == {"H"}


def test_readers_cover_the_default_extensions():
    assert set(READERS) <= set(IndexConfig().extensions)
