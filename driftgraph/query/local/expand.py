"""Local search expansion (round trip 2): one query, ``cypher/query/local_expand.cypher``.

For the kept entry entities it returns their rows, relationships (in-network first, ``relationships_per_entity``
each), the reports of their communities up to ``max_community_level``, their claims, and the chunks that
mention them; for the seed chunks (the best chunk hits, and each entry entity's ``entity_seed_chunks`` most
query-similar chunks), the other chunks that share a rare entity with them (the second hop). Each
candidate carries ``n_tokens`` and its ranking signals; similarities are computed in Cypher from the stored
embeddings. The JVM client runs the same file with the same parameters.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from driftgraph.query.local.neighbourhood import Expansion, Neighbourhood

if TYPE_CHECKING:
    from driftgraph.config import LocalConfig
    from driftgraph.query.local.entry import EntryResult
    from driftgraph.query.local.run import Exclusions, LocalRun
    from driftgraph.store.db import Store


@dataclass(frozen=True)
class ExpandFrom:
    """Where the expansion starts: kept entry entities, seed chunks, every chunk hit and the kept reports."""

    entity_ids: Sequence[str] = ()
    seed_ids: Sequence[str] = ()
    chunk_ids: Sequence[str] = ()
    report_ids: Sequence[str] = ()

    @classmethod
    def of(cls, entry: EntryResult) -> ExpandFrom:
        return cls([e.id for e in entry.entities], entry.seeds, [h.id for h in entry.chunk_hits], entry.report_ids)


def expand(run: LocalRun, entry: EntryResult) -> Neighbourhood:
    """Round trip 2 (none when nothing was kept): the neighbourhood of the entry points, second hop included.
    Its trips are counted on the run's trace, not from the store's counter: DRIFT runs several of these at once."""
    params = expansion_params(run.settings, run.vector, ExpandFrom.of(entry), run.exclusions(entry.excluded_ids))
    expansion, trips = run_expansion(run.store, params)
    run.trace.round_trips += trips
    return Neighbourhood(expansion)


def expansion_params(
    settings: LocalConfig, vector: Sequence[float], start: ExpandFrom, exclusions: Exclusions
) -> dict[str, Any]:
    """Parameters of ``cypher/query/local_expand.cypher`` (the JVM client sends the same)."""
    return {
        "vector": [float(x) for x in vector],
        "entity_ids": list(start.entity_ids),
        "seed_ids": list(start.seed_ids),
        "chunk_ids": list(start.chunk_ids),
        "report_ids": list(start.report_ids),
        "exclude_ids": list(exclusions.ids),
        "exclude_titles": list(exclusions.titles),
        "max_df": settings.hop_max_chunks_per_entity,
        "per_entity": settings.entity_chunks,
        "rels_per_entity": settings.relationships_per_entity,
        "max_level": settings.max_community_level,
        "entity_seeds": settings.entity_seed_chunks,
    }


def run_expansion(store: Store, params: dict[str, Any]) -> tuple[Expansion, int]:
    """The expansion and the Bolt round trips it took: one, or none when nothing was kept."""
    if not params["entity_ids"] and not params["chunk_ids"] and not params["report_ids"]:
        return Expansion(), 0
    return Expansion.from_row(store.read("query/local_expand", **params)[0]), 1
