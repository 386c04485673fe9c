"""What ``adopt`` returns: what it found, what it added next to the other tool's graph, failures, cost, timings.

Code reads the attributes; ``to_dict()`` gives the document ``adopt --json`` prints, key for key and in the
same order (``tests/test_summary_golden.py`` holds it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from driftgraph.index.summary import CommunityChanges, ReportFailure, TokenCount

if TYPE_CHECKING:
    from driftgraph.store.synonyms import SynonymSummary


@dataclass(frozen=True)
class Added:
    """What adopt wrote next to the other tool's graph (none of the tool's own labels or properties change)."""

    linked: dict[str, int]  # the mapping step: label_entities, add_ids, part_of, has_entity
    descriptions: int
    related: dict[str, int]  # RELATED edges written and removed
    communities: CommunityChanges
    reports_generated: int
    reports_reused: int
    reports_skipped_small: int  # communities under index.report_min_size, sent to no model
    embedded: dict[str, int]  # per node kind: entity, chunk, community
    synonyms: SynonymSummary

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.linked,
            "descriptions": self.descriptions,
            "related": dict(self.related),
            "communities": self.communities.to_dict(),
            "reports_generated": self.reports_generated,
            "reports_reused": self.reports_reused,
            "reports_skipped_small": self.reports_skipped_small,
            "embedded": dict(self.embedded),
            "synonyms": self.synonyms.to_dict(),
        }


@dataclass(frozen=True)
class ReusedVectors:
    """The other tool's vectors kept because they are the configured embedder's (chunks, entities)."""

    chunk: int
    entity: int

    def to_dict(self) -> dict[str, Any]:
        return {"chunk": self.chunk, "entity": self.entity}


@dataclass(frozen=True)
class AdoptFailures:
    """Descriptions and reports that failed (not cached: the next run retries them)."""

    descriptions: tuple[str, ...] = ()
    reports: tuple[ReportFailure, ...] = ()

    @property
    def count(self) -> int:
        return len(self.descriptions) + len(self.reports)

    def to_dict(self) -> dict[str, Any]:
        return {
            "count": self.count,
            "descriptions": list(self.descriptions),
            "reports": [r.to_dict() for r in self.reports],
        }


@dataclass(frozen=True)
class AdoptSummary:
    """One ``adopt`` run over a graph neo4j-graphrag or LLM Graph Builder built."""

    source: str  # neo4j-graphrag or llm-graph-builder
    found: dict[str, int]  # what detection counted (the shape that chose ``source``)
    documents: int
    chunks: int
    entities: int
    relationships: int
    communities: int
    levels: int
    reports: int
    llm_calls: int
    tokens: TokenCount
    cache_hits: int
    added: Added
    reused_vectors: ReusedVectors
    aliased_indexes: tuple[str, ...]  # our indexes on alias labels, where the tool's index covers the property
    failures: AdoptFailures
    seconds: dict[str, float]  # per stage, and ``total``

    def to_dict(self) -> dict[str, Any]:
        """The ``adopt --json`` document."""
        return {
            "source": self.source,
            "found": dict(self.found),
            "documents": self.documents,
            "chunks": self.chunks,
            "entities": self.entities,
            "relationships": self.relationships,
            "communities": self.communities,
            "levels": self.levels,
            "reports": self.reports,
            "llm_calls": self.llm_calls,
            "tokens": self.tokens.to_dict(),
            "cache_hits": self.cache_hits,
            "added": self.added.to_dict(),
            "reused_vectors": self.reused_vectors.to_dict(),
            "aliased_indexes": list(self.aliased_indexes),
            "failures": self.failures.to_dict(),
            "seconds": dict(self.seconds),
        }
