"""What every reader returns, and the one way a reader says a file cannot be read (its skip reason)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from driftgraph.index.formats.place import Span

EXTRA = "documents"


@dataclass(frozen=True)
class Extracted:
    """A file's text, the span of each page, slide or section in it, and metadata for the Document node."""

    text: str
    spans: tuple[Span, ...]
    metadata: dict[str, Any] = field(default_factory=dict)


class Unreadable(Exception):
    """The file is skipped; ``str(err)`` is the one-line reason listed in the run's summary."""


def needs(library: str) -> Unreadable:
    """The skip reason when a format's library is not installed: it names the extra that brings it."""
    return Unreadable(f"needs {library}: pip install 'driftgraph[{EXTRA}]'")
