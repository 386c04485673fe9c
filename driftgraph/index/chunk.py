"""Token windows with overlap; each chunk keeps its position so NEXT_CHUNK links follow the document, and where
it came from (page, slide or heading path) when its document has places.

Locations are kept exact by mapping offsets, not by splitting first: the whole document is tokenized and windowed
as before (so a chunk's text, id and size do not depend on the format), each window's first and last token are
mapped back to character offsets in the document text, and the chunk's ``location`` names every page, slide or
heading section whose span those characters overlap (index/formats/place.py). A window crossing a page break
says so (``pages 3-4``) instead of being cut in two small chunks at every page.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol, cast

from driftgraph.index.formats import locate
from driftgraph.index.load import Document
from driftgraph.llm.tokenizer import get_tokenizer


@dataclass(frozen=True)
class Chunk:
    id: str
    document_id: str
    index: int
    text: str
    n_tokens: int
    location: str | None = None  # "page 3", "pages 3-4", "slide 2", "Operations > Storm recovery"
    keep_location: bool = False  # the document's places are not known: the stored chunk keeps its location


class _Offsets(Protocol):
    def decode_with_offsets(self, tokens: list[int]) -> tuple[str, list[int]]: ...


def chunk_id(document_id: str, index: int, text: str) -> str:
    """Stable: the document's content hash, the position, and the text itself."""
    return hashlib.sha256(f"{document_id}\x00{index}\x00{text}".encode()).hexdigest()


def split_tokens(n: int, size: int, overlap: int) -> list[tuple[int, int]]:
    """Window bounds over ``n`` tokens; the last window ends at ``n`` and none is empty."""
    if n == 0:
        return []
    step = size - overlap
    bounds = []
    start = 0
    while True:
        end = min(start + size, n)
        bounds.append((start, end))
        if end >= n:
            return bounds
        start += step


def chunk_document(doc: Document, size: int, overlap: int, encoding: str) -> list[Chunk]:
    tok = get_tokenizer(encoding)
    ids = tok.encode(doc.text, disallowed_special=())  # type: ignore[call-arg]
    # character offset of every token's first character (tiktoken's own mapping), only when there is a place to find
    spans = doc.spans or ()
    starts = cast(_Offsets, tok).decode_with_offsets(ids)[1] + [len(doc.text)] if spans else []
    chunks = []
    for i, (start, end) in enumerate(split_tokens(len(ids), size, overlap)):
        text = tok.decode(ids[start:end])
        where = locate(spans, starts[start], starts[end]) if starts else None
        chunks.append(Chunk(chunk_id(doc.id, i, text), doc.id, i, text, end - start, where, doc.spans is None))
    return chunks


def chunk_documents(docs: Iterable[Document], size: int, overlap: int, encoding: str) -> list[Chunk]:
    return [c for doc in docs for c in chunk_document(doc, size, overlap, encoding)]
