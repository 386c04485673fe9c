"""Hierarchical Leiden (graspologic-native's core) with a fixed seed: the same graph gives the same
communities, numbers and ids on every run.

Edges go in sorted order with sorted endpoints, so nothing depends on dict or set iteration order. A
community's id hashes its level and its member entity ids: an unchanged community keeps its id (and its
report) across incremental runs, a changed one gets a new id. Numbers are assigned in a canonical order
(level, then size descending, then first member id) rather than taken from the library's internals.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from dataclasses import dataclass, field

from driftgraph.index.merge import Graph


@dataclass
class Community:
    id: str
    community: int
    level: int
    parent: int
    entity_ids: list[str]
    children: list[int] = field(default_factory=list)
    relationship_ids: list[str] = field(default_factory=list)
    text_unit_ids: list[str] = field(default_factory=list)

    @property
    def size(self) -> int:
        return len(self.entity_ids)


def community_id(level: int, entity_ids: list[str]) -> str:
    return hashlib.sha256(f"community\x00{level}\x00{','.join(sorted(entity_ids))}".encode()).hexdigest()[:32]


def leiden_levels(
    edges: list[tuple[str, str, float]], max_cluster_size: int, seed: int
) -> tuple[dict[tuple[int, int], list[str]], dict[int, int]]:
    """{(level, cluster): sorted members} and {cluster: parent cluster or -1}."""
    from graspologic_native import hierarchical_leiden

    if not edges:
        return {}, {}
    result = hierarchical_leiden(edges, max_cluster_size=max_cluster_size, seed=seed)
    members: dict[tuple[int, int], list[str]] = defaultdict(list)
    parents: dict[int, int] = {}
    for p in result:
        members[(p.level, p.cluster)].append(p.node)
        parents[p.cluster] = -1 if p.parent_cluster is None else p.parent_cluster
    return {k: sorted(v) for k, v in members.items()}, parents


def detect_communities(graph: Graph, max_cluster_size: int, seed: int) -> list[Community]:
    pairs: dict[tuple[str, str], float] = {}
    for r in graph.relationships:
        a, b = sorted((r.source_id, r.target_id))
        pairs[(a, b)] = pairs.get((a, b), 0.0) + float(r.weight or 1.0)
    edges = [(a, b, w) for (a, b), w in sorted(pairs.items())]
    members, parents = leiden_levels(edges, max_cluster_size, seed & 0xFFFFFFFFFFFFFFFF)
    order = sorted(members, key=lambda k: (k[0], -len(members[k]), members[k][0]))
    number = {key: i for i, key in enumerate(order)}
    out: dict[int, Community] = {}
    for level, cluster in order:
        ids = members[(level, cluster)]
        n = number[(level, cluster)]
        parent = number.get((level - 1, parents.get(cluster, -1)), -1)
        out[n] = Community(community_id(level, ids), n, level, parent, ids)
    for c in out.values():
        if c.parent >= 0:
            out[c.parent].children.append(c.community)
    by_entity = {e.id: e for e in graph.entities}
    rels_by_entity: dict[str, list[str]] = defaultdict(list)
    for r in graph.relationships:
        rels_by_entity[r.source_id].append(r.id)
        rels_by_entity[r.target_id].append(r.id)
    rel_ends = {r.id: (r.source_id, r.target_id) for r in graph.relationships}
    for c in out.values():
        inside = set(c.entity_ids)
        c.children.sort()
        c.relationship_ids = sorted(
            {rid for e in c.entity_ids for rid in rels_by_entity[e] if set(rel_ends[rid]) <= inside}
        )
        c.text_unit_ids = sorted({t for e in c.entity_ids for t in by_entity[e].text_unit_ids})
    return [out[n] for n in sorted(out)]
