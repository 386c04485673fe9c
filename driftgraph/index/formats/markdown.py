"""Heading paths of a Markdown file, as spans over its text (the text itself is indexed as written).

ATX headings only (``#`` to ``######`` at the start of a line, outside fenced code blocks): setext underlines
(``===``, ``---``) are too easily a table rule or front matter to be read as headings without a full parser.
"""

from __future__ import annotations

import re

from driftgraph.index.formats.place import Place, Span

_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")


def heading_spans(text: str) -> tuple[Span, ...]:
    """One span per heading, from its line to the next heading (any level); text before the first has none."""
    stack: list[tuple[int, str]] = []
    opened: list[tuple[int, tuple[str, ...]]] = []  # (offset of the heading line, its path)
    fence: str | None = None
    at = 0
    for line in text.splitlines(keepends=True):
        fenced = _FENCE.match(line)
        if fenced is not None:
            fence = None if fence == fenced.group(1) else (fence or fenced.group(1))
        elif fence is None and (m := _HEADING.match(line.rstrip("\r\n"))) is not None and m.group(2).strip():
            level = len(m.group(1))
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, " ".join(m.group(2).split())))
            opened.append((at, tuple(t for _, t in stack)))
        at += len(line)
    if not opened:
        return ()
    ends = [start for start, _ in opened[1:]] + [len(text)]
    return tuple(Span(start, end, Place("section", path=path)) for (start, path), end in zip(opened, ends, strict=True))
