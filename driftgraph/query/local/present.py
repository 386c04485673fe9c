"""The order local search shows its included chunks in (``local.chunk_rank``), apart from which chunks enter.

The selection score (rank.py) decides which chunks the fill takes; this module only reorders the chunks that
entered, so the context holds the same text units whatever the order (budgeted recall cannot move). The order
matters twice: the first rows are what a reader (and a model) weighs most, and the short ids the answer cites
follow it. ``score`` keeps the selection order; ``vector`` sorts by query similarity alone; ``graph`` sorts by

    similarity + w.ppr x mass + w.entities x entity cover + w.seed x seed support + w.bridge x bridge support

with ``mass`` the walk's (share of the best chunk's, ``ppr.mass_exponent`` root), ``entity cover`` the summed
``idf / idf_max x similarity`` of the distinct entry entities the chunk names, and the seed and bridge support
of the selection score (docs/concepts/local-search.md, "Presentation order"). With ``w.chain`` the order is
built place by place: each next place adds ``w.chain x`` the chunk's strongest rare-entity link to a chunk
already shown (the second hop's links), so a chain's next link follows the one before. Ties go to the
selection order.
The reordered chunks take the included chunks' own short ids, in the new order (same ids, so the same tokens).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from driftgraph.query import tables as render
from driftgraph.query.budget import Candidate

if TYPE_CHECKING:
    from driftgraph.config import LocalConfig


def presentation_score(c: Candidate, settings: LocalConfig) -> float:
    """A chunk candidate's presentation score under ``settings.chunk_rank`` (higher first)."""
    p = c.payload or {}
    sim = float(p.get("similarity") or 0.0)
    if settings.chunk_rank == "vector":
        return sim
    if settings.chunk_rank == "score":
        return c.score
    w = settings.chunk_rank_weights
    sig = p.get("signals") or {}
    return (
        sim
        + w.ppr * float(sig.get("mass", 0.0))
        + w.entities * float(sig.get("entities", 0.0))
        + w.seed * float(sig.get("seed", 0.0))
        + w.bridge * float(sig.get("bridge", 0.0))
    )


def _chained(order: list[Candidate], settings: LocalConfig) -> list[Candidate]:
    """Greedy: each next place goes to the best ``presentation_score + chain x link``, ``link`` the chunk's
    strongest rare-entity link (payload ``links``) to a chunk already placed; ties keep ``order``."""
    chain = settings.chunk_rank_weights.chain
    base = {id(c): presentation_score(c, settings) for c in order}
    bonus = {id(c): 0.0 for c in order}
    left = list(order)
    placed: list[Candidate] = []
    while left:
        best = max(range(len(left)), key=lambda i: (base[id(left[i])] + chain * bonus[id(left[i])], -i))
        c = left.pop(best)
        placed.append(c)
        links = (c.payload or {}).get("links") or {}
        for other in left:
            w = float(links.get(other.id, 0.0))
            if w > bonus[id(other)]:
                bonus[id(other)] = w
    return placed


def present(included: Sequence[Candidate], settings: LocalConfig) -> list[Candidate]:
    """The included candidates with the chunks reordered by ``presentation_score`` (ties: selection order) and
    renumbered with the chunks' own short ids in that order; other sources unchanged. ``score``: unchanged."""
    if settings.chunk_rank == "score":
        return list(included)
    chunks = [c for c in included if c.source == "chunk"]
    ids = sorted(c.rank for c in chunks)
    order = sorted(chunks, key=lambda c: (-presentation_score(c, settings), c.rank, c.id))
    if settings.chunk_rank == "graph" and settings.chunk_rank_weights.chain > 0:
        order = _chained(order, settings)
    renumbered: dict[int, Candidate] = {}
    for new_rank, c in zip(ids, order, strict=True):
        if new_rank == c.rank:
            renumbered[id(c)] = c
            continue
        payload = {**(c.payload or {}), "row": render.row("chunk", new_rank, c.payload or {})}
        renumbered[id(c)] = replace(c, rank=new_rank, payload=payload)
    return [renumbered.get(id(c), c) for c in included]
