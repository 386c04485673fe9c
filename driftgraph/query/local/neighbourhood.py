"""What local search found around the question, as typed values each stage returns anew (never edits in place).

``Expansion`` is round trip 2's answer, one field per list that ``cypher/query/local_expand.cypher`` returns.
``Neighbourhood`` is that expansion grown by the hops past the second: the bridge's chunks and links, the RELATED
edges among the entities known by then, the chunks ``ppr.fetch`` adds, and the walk's result (``Walk``, computed in
``ppr.py``). Rows are the database's records (read-only mappings: the JSON boundary); the containers are frozen.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

Row = Mapping[str, Any]
Rows = tuple[Row, ...]


@dataclass
class Walk:
    """PPR mass per chunk (over the best chunk's, to ``ppr.mass_exponent``: the best has 1.0) and each chunk's
    shortest route from a seed."""

    mass: dict[str, float] = field(default_factory=dict)
    depth: dict[str, int] = field(default_factory=dict)
    via: dict[str, str] = field(default_factory=dict)
    nodes: int = 0
    edges: int = 0
    relations: int = 0  # of the edges, RELATED ones between entities
    iterations: int = 0


@dataclass(frozen=True)
class Expansion:
    """Round trip 2: the entry entities' rows, relationships, reports and claims, their chunks (``entity_links``),
    the chunks that share a rare entity with a seed chunk (``seed_links``), and every chunk those name."""

    entities: Rows = ()
    relationships: Rows = ()
    reports: Rows = ()
    claims: Rows = ()
    seed_links: Rows = ()
    entity_links: Rows = ()
    chunks: Rows = ()

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Expansion:
        """The expansion query's one row (missing or null lists are empty)."""
        return cls(**{f.name: tuple(row.get(f.name) or ()) for f in fields(cls)})


@dataclass(frozen=True)
class Neighbourhood:
    """The expansion plus what the hops past the second found, in the order they found it.

    ``chunks`` is every fetched chunk row (expansion first, then each hop's, then ``ppr.fetch``'s; a chunk may
    repeat, its first row counts); ``links`` every chunk-entity link (seed, entity, then bridge links): the graph
    the walk runs on and whose entities the bridge asks RELATED edges for."""

    expansion: Expansion = Expansion()
    bridge_links: Rows = ()
    more_chunks: Rows = ()
    walk_relations: Rows = ()
    walk: Walk | None = None

    @property
    def chunks(self) -> Rows:
        return (*self.expansion.chunks, *self.more_chunks)

    @property
    def links(self) -> Rows:
        x = self.expansion
        return (*x.seed_links, *x.entity_links, *self.bridge_links)

    def grown(
        self,
        *,
        chunks: Sequence[Row] = (),
        bridge_links: Sequence[Row] = (),
        relations: Sequence[Row] = (),
        walk: Walk | None = None,
    ) -> Neighbourhood:
        """A new neighbourhood with these rows appended (and the walk, when given)."""
        return replace(
            self,
            more_chunks=(*self.more_chunks, *chunks),
            bridge_links=(*self.bridge_links, *bridge_links),
            walk_relations=(*self.walk_relations, *relations),
            walk=walk if walk is not None else self.walk,
        )

    @classmethod
    def of(cls, x: Mapping[str, Any]) -> Neighbourhood:
        """From one mapping with the expansion's keys plus ``bridge_links``, ``walk_relations`` and ``ppr`` (a
        Walk): how tests and tools describe a neighbourhood by hand."""
        return cls(
            Expansion.from_row(x),
            bridge_links=tuple(x.get("bridge_links") or ()),
            walk_relations=tuple(x.get("walk_relations") or ()),
            walk=x.get("ppr"),
        )
