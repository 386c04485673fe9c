"""What ``index`` returns: typed counts, failures, cost and timings, with the JSON ``index --json`` prints.

Code reads the attributes; ``to_dict()`` gives the document scripts and the JVM tests read, key for key and in
the same order (``tests/test_summary_golden.py`` holds it). ``TokenCount`` and ``CommunityChanges`` are shared
with ``adopt``, which runs the indexer's community and report stages.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from driftgraph.store.synonyms import SynonymSummary


@dataclass(frozen=True)
class TokenCount:
    """Chat tokens a run spent (cache hits count nothing)."""

    prompt: int = 0
    completion: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"prompt": self.prompt, "completion": self.completion}


@dataclass(frozen=True)
class CommunityChanges:
    """How the stored communities changed: dropped, kept with their ids, and new."""

    removed: int = 0
    kept: int = 0
    new: int = 0

    @classmethod
    def from_counts(cls, counts: Mapping[str, int]) -> CommunityChanges:
        return cls(removed=counts["removed"], kept=counts["kept"], new=counts["new"])

    def to_dict(self) -> dict[str, Any]:
        return {"removed": self.removed, "kept": self.kept, "new": self.new}


@dataclass(frozen=True)
class DocumentCounts:
    """The folder's documents against the database's: what this run added, removed, replaced (same id, other
    text: the document API's ``replace``) and left alone."""

    total: int
    added: int
    removed: int
    unchanged: int
    replaced: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "added": self.added,
            "removed": self.removed,
            "replaced": self.replaced,
            "unchanged": self.unchanged,
        }


@dataclass(frozen=True)
class ChunkFailure:
    """A chunk whose extraction failed (not cached: the next run retries it)."""

    chunk_id: str
    document: str
    errors: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"chunk_id": self.chunk_id, "document": self.document, "errors": list(self.errors)}


@dataclass(frozen=True)
class ReportFailure:
    """A community whose report failed."""

    community: int
    level: int
    error: str

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ReportFailure:
        return cls(community=d["community"], level=d["level"], error=d["error"])

    def to_dict(self) -> dict[str, Any]:
        return {"community": self.community, "level": self.level, "error": self.error}


@dataclass(frozen=True)
class IndexFailures:
    """Items that failed and were left for the next run; ``count`` decides the exit code 3."""

    chunks: tuple[ChunkFailure, ...] = ()
    reports: tuple[ReportFailure, ...] = ()
    summaries: tuple[str, ...] = ()
    dropped_records: int = 0  # malformed records an extraction left out (not a failure of the chunk)

    @property
    def count(self) -> int:
        return len(self.chunks) + len(self.reports) + len(self.summaries)

    def to_dict(self) -> dict[str, Any]:
        return {
            "count": self.count,
            "chunks": [c.to_dict() for c in self.chunks],
            "reports": [r.to_dict() for r in self.reports],
            "summaries": list(self.summaries),
            "dropped_records": self.dropped_records,
        }


@dataclass(frozen=True)
class Redone:
    """What this run did again (the rest was reused from the database or the call cache)."""

    documents_extracted: int
    chunks_extracted: int
    extract_llm_calls: int
    extract_cache_hits: int
    descriptions_summarized: int
    communities: CommunityChanges
    reports_generated: int
    reports_reused: int
    reports_outdated: int
    reports_with_substituted_sub_reports: int
    reports_skipped_small: int  # communities under index.report_min_size, sent to no model
    deleted: dict[str, int]  # per kind: documents, claims, relationships, chunks, entities, mentions
    embedded: dict[str, int]  # per node kind: entity, chunk, community
    synonyms: SynonymSummary

    def to_dict(self) -> dict[str, Any]:
        return {
            "documents_extracted": self.documents_extracted,
            "chunks_extracted": self.chunks_extracted,
            "extract_llm_calls": self.extract_llm_calls,
            "extract_cache_hits": self.extract_cache_hits,
            "descriptions_summarized": self.descriptions_summarized,
            "communities": self.communities.to_dict(),
            "reports_generated": self.reports_generated,
            "reports_reused": self.reports_reused,
            "reports_outdated": self.reports_outdated,
            "reports_with_substituted_sub_reports": self.reports_with_substituted_sub_reports,
            "reports_skipped_small": self.reports_skipped_small,
            "deleted": dict(self.deleted),
            "embedded": dict(self.embedded),
            "synonyms": self.synonyms.to_dict(),
        }


@dataclass(frozen=True)
class LoadSummary:
    """What reading the folder found: files read, documents made, files skipped and why, warnings."""

    files: int
    documents: int
    ignored_extensions: int
    skipped: tuple[dict[str, str], ...]  # {"path", "reason"}
    warnings: tuple[dict[str, str], ...]  # {"path", "warning"}
    decode_warnings: int
    duplicates: int

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> LoadSummary:
        return cls(
            files=d["files"],
            documents=d["documents"],
            ignored_extensions=d["ignored_extensions"],
            skipped=tuple(d["skipped"]),
            warnings=tuple(d["warnings"]),
            decode_warnings=d["decode_warnings"],
            duplicates=d["duplicates"],
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "documents": self.documents,
            "ignored_extensions": self.ignored_extensions,
            "skipped": [dict(s) for s in self.skipped],
            "warnings": [dict(w) for w in self.warnings],
            "decode_warnings": self.decode_warnings,
            "duplicates": self.duplicates,
        }


@dataclass(frozen=True)
class BatchRound:
    """One Batch API round of ``index --batch``: its stage, requests sent, lines failed, requests per phase."""

    stage: str
    requests: int
    failed: int
    phases: dict[str, int]

    def to_dict(self) -> dict[str, Any]:
        return {"stage": self.stage, "requests": self.requests, "failed": self.failed, "phases": dict(self.phases)}


@dataclass(frozen=True)
class BatchStats:
    """The rounds ``index --batch`` ran before the ordinary run read their answers from the cache."""

    rounds: tuple[BatchRound, ...] = ()

    @property
    def requests(self) -> int:
        return sum(r.requests for r in self.rounds)

    @property
    def failed(self) -> int:
        return sum(r.failed for r in self.rounds)

    def to_dict(self) -> dict[str, Any]:
        return {"rounds": [r.to_dict() for r in self.rounds], "requests": self.requests, "failed": self.failed}


@dataclass(frozen=True)
class IndexSummary:
    """One ``index`` run: the folder, what the graph holds now, what was re-done, failures, cost and timings."""

    input: str
    documents: DocumentCounts
    chunks: int
    entities: int
    relationships: int
    claims: int
    communities: int
    levels: int
    reports: int
    llm_calls: int
    tokens: TokenCount
    cache_hits: int
    redone: Redone
    failures: IndexFailures
    load: LoadSummary
    llm: dict[str, dict[str, int]]  # the ledger's counters per phase, and ``total``
    seconds: dict[str, float]  # per stage, and ``total``
    batch: BatchStats | None = None  # ``index --batch`` only

    def with_batch(self, batch: BatchStats) -> IndexSummary:
        return replace(self, batch=batch)

    def to_dict(self) -> dict[str, Any]:
        """The ``index --json`` document."""
        out: dict[str, Any] = {
            "input": self.input,
            "documents": self.documents.to_dict(),
            "chunks": self.chunks,
            "entities": self.entities,
            "relationships": self.relationships,
            "claims": self.claims,
            "communities": self.communities,
            "levels": self.levels,
            "reports": self.reports,
            "llm_calls": self.llm_calls,
            "tokens": self.tokens.to_dict(),
            "cache_hits": self.cache_hits,
            "redone": self.redone.to_dict(),
            "failures": self.failures.to_dict(),
            "load": self.load.to_dict(),
            "llm": {phase: dict(counts) for phase, counts in self.llm.items()},
            "seconds": dict(self.seconds),
        }
        if self.batch is not None:
            out["batch"] = self.batch.to_dict()
        return out


Action = Literal["add", "replace", "delete"]


@dataclass(frozen=True)
class DocumentInfo:
    """A stored document as ``documents list`` shows it; ``text`` only from ``get``."""

    id: str
    title: str
    metadata: dict[str, Any]
    characters: int
    chunks: int
    human_readable_id: int | None = None
    text: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {
            "id": self.id,
            "title": self.title,
            "metadata": self.metadata,
            "characters": self.characters,
            "chunks": self.chunks,
            "human_readable_id": self.human_readable_id,
        }
        return out if self.text is None else {**out, "text": self.text}


@dataclass(frozen=True)
class DocumentChange:
    """What one add, replace or delete did: the ids it changed, those already stored as given (nothing done),
    the files not read (with why), and the index run's summary (None when nothing changed)."""

    action: Action
    documents: tuple[str, ...]
    unchanged: tuple[str, ...] = ()
    skipped: tuple[dict[str, str], ...] = ()
    index: IndexSummary | None = None
    seconds: float = 0.0
    warnings: tuple[dict[str, str], ...] = field(default=())

    @property
    def changed(self) -> bool:
        return self.index is not None

    def to_dict(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "documents": list(self.documents),
            "unchanged": list(self.unchanged),
            "skipped": [dict(s) for s in self.skipped],
            "warnings": [dict(w) for w in self.warnings],
            "index": None if self.index is None else self.index.to_dict(),
            "seconds": round(self.seconds, 3),
        }
