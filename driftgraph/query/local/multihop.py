"""Multi-hop bridge (round trips 3..): the entities of the best chunks not yet hopped from seed the next hop.

Round trip 2 reaches two hops (the top ``seed_chunks`` vector hits share a rare entity with the chunks they
bridge to). A question whose chain is longer needs the chunks found there to seed a third hop, and so on:
after each hop the chunks are scored (``rank.score_chunks``), the best ``bridge_frontier`` chunks that have
not seeded a hop yet become the frontier, and one query (``cypher/query/local_bridge.cypher``) fetches the
chunks that share an entity (mentioned in at most ``bridge_max_df`` chunks) with them, the
``bridge_chunks_per_entity`` most query-similar per entity (so a common entity bridges to few chunks).
A new chunk's support is ``idf(entity) / idf_max * score(frontier chunk)`` (weighted by ``bridge_weight``),
so support decays along the chain and an off-topic frontier bridges to little. It stops at ``max_hops`` or
when a hop finds nothing new. With ``bridge_synonyms`` a hop also crosses a ``SYN`` edge (``store/synonyms.py``)
from an entity the frontier names to a look-alike name (one mention elsewhere is enough there). Each link keeps
its hop number and its path (entity titles from the seed, ``A > B``; ``B ~ B'`` for a synonym).

With ``ranking: ppr`` and ``ppr.known_relations`` the same query also returns the RELATED edges among the
entities the search holds by then (entry entities, every link's entity), for the walk
(``Neighbourhood.walk_relations``): the relationships the index extracted tie a chain's entities together where
no chunk names two of them, and asking only for the edges among known entities costs no round trip and
fetches no new mention.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from driftgraph.query.local.entry import EntryResult
from driftgraph.query.local.neighbourhood import Neighbourhood
from driftgraph.query.local.rank import idf, score_chunks

if TYPE_CHECKING:
    from driftgraph.query.local.rank import ScoredChunk
    from driftgraph.query.local.run import LocalRun


def bridge(run: LocalRun, entry: EntryResult, found: Neighbourhood) -> Neighbourhood:
    """The neighbourhood grown hop by hop past the second (a new value each hop); each hop is one round trip
    on the run's trace."""
    settings = run.settings
    relations = settings.ranking == "ppr" and settings.ppr.known_relations
    if settings.bridge_frontier <= 0 or not found.chunks:
        return found
    n = max(entry.chunk_count, 1)
    idf_max = math.log(n + 1)
    gate = entry.chunk_gate(settings)
    exclusions = run.exclusions(entry.excluded_ids)
    expanded = set(entry.seeds)
    for hop in range(3, settings.max_hops + 1):
        scored = {sc.id: sc for sc in score_chunks(found, entry, settings)}
        frontier = [
            sc for sc in scored.values() if sc.id not in expanded and (sc.similarity >= gate or sc.support > 0)
        ][: settings.bridge_frontier]
        if not frontier:
            break
        expanded.update(sc.id for sc in frontier)
        row = run.store.read(
            "query/local_bridge",
            vector=run.vector_list(),
            frontier_ids=[sc.id for sc in frontier],
            known_ids=sorted(scored),
            exclude_ids=list(exclusions.ids),
            exclude_titles=list(exclusions.titles),
            max_df=settings.bridge_max_df,
            per_entity=settings.bridge_chunks_per_entity,
            synonyms=settings.bridge_synonyms,
            known_entity_ids=_known_entities(entry, found) if relations else [],
            relations=relations,
        )[0]
        run.trace.round_trips += 1
        if not row["chunks"]:
            found = found.grown(relations=row["relations"])
            break
        by_id = {sc.id: sc for sc in frontier}
        links = [_weighed(link, by_id[link["via"]], hop, n, idf_max) for link in row["links"]]
        found = found.grown(chunks=row["chunks"], bridge_links=links, relations=row["relations"])
    return found


def _weighed(link: dict[str, Any], via: ScoredChunk, hop: int, n: int, idf_max: float) -> dict[str, Any]:
    """A bridge link (a new row) with its hop, its support weight and its path of entity titles from the seed."""
    title = link["title"] or link["entity"]
    if link.get("synonym_of"):
        title = f"{link['synonym_of']['title']} ~ {title}"
    return {
        **link,
        "hop": hop,
        "weight": idf(link["df"], n) / idf_max * max(via.score, 0.0),
        "path": f"{via.via} > {title}" if via.via else title,
    }


def _known_entities(entry: EntryResult, found: Neighbourhood) -> list[str]:
    """Entry entities and the entity of every link so far (sorted: the query's input does not depend on order)."""
    links = found.links
    named = [link["synonym_of"]["id"] for link in links if link.get("synonym_of")]
    return sorted({e.id for e in entry.entities} | {link["entity"] for link in links} | set(named))
