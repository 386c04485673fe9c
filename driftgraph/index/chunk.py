"""Token windows with overlap; each chunk keeps its position so NEXT_CHUNK links follow the document."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

from driftgraph.index.load import Document
from driftgraph.llm.tokenizer import get_tokenizer


@dataclass(frozen=True)
class Chunk:
    id: str
    document_id: str
    index: int
    text: str
    n_tokens: int


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
    chunks = []
    for i, (start, end) in enumerate(split_tokens(len(ids), size, overlap)):
        text = tok.decode(ids[start:end])
        chunks.append(Chunk(chunk_id(doc.id, i, text), doc.id, i, text, end - start))
    return chunks


def chunk_documents(docs: Iterable[Document], size: int, overlap: int, encoding: str) -> list[Chunk]:
    return [c for doc in docs for c in chunk_document(doc, size, overlap, encoding)]
