"""Communities from the merged graph: hierarchical Leiden (index/partition.py), numbered and described.

A community's id hashes its level and its member entity ids: an unchanged community keeps its id (and so
can keep its report) across incremental runs, a changed one gets a new id. A first run numbers
communities in a canonical order (level, then size descending, then first member id); later runs keep the
number of every community whose id survives and give new communities numbers after the highest one
used so far, so a kept community's number (its human-readable id, cited in its parent's context) holds.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from driftgraph.index.merge import Graph
from driftgraph.index.partition import Previous, graph_basis, hierarchy, params_key


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
    graph_basis: str = ""

    @property
    def size(self) -> int:
        return len(self.entity_ids)


def community_id(level: int, entity_ids: list[str]) -> str:
    return hashlib.sha256(f"community\x00{level}\x00{','.join(sorted(entity_ids))}".encode()).hexdigest()[:32]


def edge_list(graph: Graph) -> list[tuple[str, str, float]]:
    """Undirected weighted edges, endpoints and list sorted: nothing depends on dict or set order."""
    pairs: dict[tuple[str, str], float] = {}
    for r in graph.relationships:
        a, b = sorted((r.source_id, r.target_id))
        pairs[(a, b)] = pairs.get((a, b), 0.0) + float(r.weight or 1.0)
    return [(a, b, w) for (a, b), w in sorted(pairs.items())]


def detect_communities(
    graph: Graph, max_cluster_size: int, seed: int, previous: Sequence[Previous] = ()
) -> list[Community]:
    """Communities, numbered; with ``previous`` (the stored partition) unchanged regions keep theirs."""
    clusters, adj = hierarchy(edge_list(graph), max_cluster_size, seed, previous)
    key = params_key(max_cluster_size, seed & 0xFFFFFFFFFFFFFFFF)
    ids = [community_id(c.level, c.members) for c in clusters]
    old_number = {p.id: p.number for p in previous}
    order = sorted(
        range(len(clusters)), key=lambda i: (clusters[i].level, -len(clusters[i].members), clusters[i].members[0])
    )
    number: dict[int, int] = {i: old_number[ids[i]] for i in order if ids[i] in old_number}
    fresh = max(old_number.values(), default=-1) + 1
    for i in order:
        if i not in number:
            number[i], fresh = fresh, fresh + 1
    out: dict[int, Community] = {}
    for i in order:
        cl = clusters[i]
        parent = number[cl.parent] if cl.parent >= 0 else -1
        basis = graph_basis(adj, cl.members, key)
        out[number[i]] = Community(ids[i], number[i], cl.level, parent, cl.members, graph_basis=basis)
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
