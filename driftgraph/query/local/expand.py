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
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from driftgraph.config import LocalConfig
    from driftgraph.store.db import Store


def expansion_params(
    settings: LocalConfig,
    vector: Sequence[float],
    entity_ids: Sequence[str],
    seed_ids: Sequence[str],
    chunk_ids: Sequence[str],
    report_ids: Sequence[str],
    exclude: Sequence[str],
    exclude_ids: Sequence[str],
) -> dict[str, Any]:
    return {
        "vector": [float(x) for x in vector],
        "entity_ids": list(entity_ids),
        "seed_ids": list(seed_ids),
        "chunk_ids": list(chunk_ids),
        "report_ids": list(report_ids),
        "exclude_ids": sorted({*exclude_ids, *exclude}),
        "exclude_titles": sorted({e.lower() for e in exclude}),
        "max_df": settings.hop_max_chunks_per_entity,
        "per_entity": settings.entity_chunks,
        "rels_per_entity": settings.relationships_per_entity,
        "max_level": settings.max_community_level,
        "entity_seeds": settings.entity_seed_chunks,
    }


def run_expansion(store: Store, params: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """The expansion and the Bolt round trips it took: one, or none when nothing was kept."""
    if not params["entity_ids"] and not params["chunk_ids"] and not params["report_ids"]:
        empty = ("entities", "relationships", "reports", "claims", "seed_links", "entity_links", "chunks")
        return {k: [] for k in empty}, 0
    return store.read("query/local_expand", **params)[0], 1
