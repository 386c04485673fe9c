"""Where a piece of a document sits (a page, a slide, a heading path) and how a chunk's places read as one label.

A reader cuts its file into ``Section``s, each with one ``Place``; ``assemble`` joins them into the document text
and keeps each section's character ``Span``. The chunker (index/chunk.py) then labels every chunk by the spans its
characters overlap, so a label is exact whatever the chunk size: ``page 3``, ``pages 3-4``, ``slide 2``,
``Operations > Storm recovery``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

Kind = Literal["page", "slide", "section"]
PATH_SEPARATOR = " > "
SECTION_SEPARATOR = "; "
MAX_PATHS = 3  # more headings than this in one chunk read "first; …; last"


@dataclass(frozen=True)
class Place:
    """A page or slide number (1-based, in file order), or a heading path (outermost first)."""

    kind: Kind
    number: int = 0
    path: tuple[str, ...] = ()


@dataclass(frozen=True)
class Section:
    """A reader's unit of text with its place; text before a document's first heading has an empty path."""

    text: str
    place: Place


@dataclass(frozen=True)
class Span:
    """Characters ``[start, end)`` of a document's text that come from ``place``."""

    start: int
    end: int
    place: Place


JOIN = "\n\n"


def assemble(sections: Iterable[Section]) -> tuple[str, tuple[Span, ...]]:
    """The document text (non-empty sections, stripped, joined by a blank line) and each section's span in it."""
    parts: list[str] = []
    spans: list[Span] = []
    at = 0
    for section in sections:
        text = _clean(section.text)
        if not text:
            continue
        if parts:
            at += len(JOIN)
        parts.append(text)
        spans.append(Span(at, at + len(text), section.place))
        at += len(text)
    return JOIN.join(parts), tuple(spans)


def _clean(text: str) -> str:
    """Stripped, without NULs, and valid UTF-8 (a PDF's broken ToUnicode map can yield lone surrogates, which the
    tokenizer and the Bolt driver both refuse)."""
    return text.replace("\x00", "").encode("utf-8", "replace").decode("utf-8").strip()


def locate(spans: Sequence[Span], start: int, end: int) -> str | None:
    """The label of the characters ``[start, end)``: every span they overlap, described together."""
    return describe([s.place for s in spans if s.start < end and s.end > start])


def describe(places: Sequence[Place]) -> str | None:
    """``page 3`` / ``pages 3-4``, ``slide 2`` / ``slides 1-2``, or the heading paths in order (``A > B``, several
    joined by ``; ``, more than ``MAX_PATHS`` as first; …; last). None when nothing is known (text before the
    first heading alone, or a format without places)."""
    numbers = sorted({p.number for p in places if p.kind in ("page", "slide")})
    if numbers:
        kind = next(p.kind for p in places if p.kind in ("page", "slide"))
        if len(numbers) == 1:
            return f"{kind} {numbers[0]}"
        return f"{kind}s {numbers[0]}-{numbers[-1]}"
    paths: list[str] = []
    for p in places:
        label = PATH_SEPARATOR.join(p.path)
        if label and label not in paths:
            paths.append(label)
    if not paths:
        return None
    if len(paths) > MAX_PATHS:
        paths = [paths[0], "…", paths[-1]]
    return SECTION_SEPARATOR.join(paths)


def heading_sections(blocks: Iterable[tuple[int, str]]) -> list[Section]:
    """Blocks in document order as sections: ``(level, text)`` with level 1-9 for a heading (it opens a section
    under the headings above it) and 0 for body text (it joins the open section)."""
    stack: list[tuple[int, str]] = []
    sections: list[Section] = []
    lines: list[str] = []

    def close() -> None:
        if lines:
            sections.append(Section("\n".join(lines), Place("section", path=tuple(t for _, t in stack))))
            lines.clear()

    for level, text in blocks:
        text = " ".join(text.split()) if level else text.strip()
        if not text:
            continue
        if level:
            close()
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, text))
        lines.append(text)
    close()
    return sections


def spans_json(spans: Sequence[Span] | None) -> str | None:
    """Spans as the JSON string a Document node keeps: ``[]`` when the document has no places, None when they
    are not known (a document stored before places were kept, see ``spans_from_json``)."""
    if spans is None:
        return None
    return json.dumps([[s.start, s.end, s.place.kind, s.place.number, list(s.place.path)] for s in spans])


def spans_from_json(text: str | None) -> tuple[Span, ...] | None:
    """The inverse of ``spans_json``: a stored document's spans, to chunk it again with its places. None for a
    document stored before its places were kept: its chunks keep the locations they have (index/chunk.py)."""
    if text is None:
        return None
    return tuple(Span(int(a), int(b), Place(kind, int(n), tuple(path))) for a, b, kind, n, path in json.loads(text))
