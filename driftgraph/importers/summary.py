"""What ``import-graphrag`` and ``export-graphrag`` return: typed counts, warnings, embedding and timings.

Code reads the attributes; ``to_dict()`` gives the document ``--json`` prints, key for key and in the same
order (``tests/test_summary_golden.py`` holds it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from driftgraph.store.synonyms import SynonymSummary


@dataclass(frozen=True)
class NodeCounts:
    """Nodes the database holds after the import, per label (the JSON keys are the labels)."""

    documents: int
    chunks: int
    entities: int
    communities: int
    claims: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "Document": self.documents,
            "Chunk": self.chunks,
            "__Entity__": self.entities,
            "__Community__": self.communities,
            "Claim": self.claims,
        }


@dataclass(frozen=True)
class TableWrite:
    """One parquet table streamed into Neo4j: rows in the file, written, skipped by validation, seconds."""

    file: str
    rows: int
    written: int
    seconds: float

    @property
    def skipped(self) -> int:
        return self.rows - self.written

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "rows": self.rows,
            "written": self.written,
            "skipped": self.skipped,
            "seconds": self.seconds,
        }


@dataclass(frozen=True)
class KindEmbedding:
    """One node kind's vectors: taken from GraphRAG's ``embeddings.*.parquet``, then computed for the rest.
    ``note`` says which file was used, or why it was not (another model, another dimension)."""

    precomputed: int = 0
    embedded: int = 0
    note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"precomputed": self.precomputed}
        if self.note is not None:
            out["note"] = self.note
        out["embedded"] = self.embedded
        return out


@dataclass(frozen=True)
class ImportEmbedding:
    """The embedding step of an import: the embedder, each kind's vectors, and the embedder's pace."""

    model: str
    dimensions: int
    kinds: dict[str, KindEmbedding]  # entity, chunk, community (in that order)
    embed_seconds: float
    items_per_second: float | None  # None when nothing needed the embedder

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"model": self.model, "dimensions": self.dimensions}
        out.update((kind, k.to_dict()) for kind, k in self.kinds.items())
        out["embed_seconds"] = self.embed_seconds
        out["items_per_second"] = self.items_per_second
        return out


@dataclass(frozen=True)
class ImportSummary:
    """One ``import-graphrag`` run. ``embedded`` is None under ``--no-embed`` (JSON ``{"skipped": true}``);
    ``placeholder_entities`` are relationship endpoints entities.parquet lacks (in ``counts.entities``)."""

    source: str
    counts: NodeCounts
    relationships: int
    placeholder_entities: tuple[str, ...]
    tables: dict[str, TableWrite]  # in write order
    embedded: ImportEmbedding | None
    synonyms: SynonymSummary
    warnings: dict[str, int]  # counted data problems that did not stop the import, sorted by key
    warning_examples: dict[str, list[str]]  # up to three examples per warning
    phase_seconds: dict[str, float]
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        """The ``import-graphrag --json`` document."""
        return {
            "source": self.source,
            "counts": self.counts.to_dict(),
            "relationships": self.relationships,
            "placeholder_entities": list(self.placeholder_entities),
            "tables": {name: t.to_dict() for name, t in self.tables.items()},
            "embedded": {"skipped": True} if self.embedded is None else self.embedded.to_dict(),
            "synonyms": self.synonyms.to_dict(),
            "warnings": dict(self.warnings),
            "warning_examples": {k: list(v) for k, v in self.warning_examples.items()},
            "phase_seconds": dict(self.phase_seconds),
            "seconds": self.seconds,
        }


@dataclass(frozen=True)
class ExportSummary:
    """One ``export-graphrag`` run: the folder written and the rows per table (0: no file written)."""

    out: str
    rows: dict[str, int]

    def to_dict(self) -> dict[str, Any]:
        """The ``export-graphrag --json`` document."""
        return {"out": self.out, "rows": dict(self.rows)}
