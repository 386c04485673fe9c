"""Incremental clustering (index/partition.py): what a change does not touch keeps its communities.

The graph is a seeded planted partition (dense groups, sparse links between them) big enough that
Leiden run from scratch on a slightly different graph moves communities far from the change.
"""

from __future__ import annotations

import numpy as np

from driftgraph.index.communities import Community, detect_communities
from driftgraph.index.merge import Entity, Graph, Relationship
from driftgraph.index.partition import Previous

SEED = 0xDEADBEEF


def _graph(edges: list[tuple[str, str, float]]) -> Graph:
    names = sorted({n for a, b, _ in edges for n in (a, b)})
    ents = [Entity(n, n, "person", [f"{n} description"], ["c"], f"{n} description") for n in names]
    rels = [Relationship(f"{a}->{b}", a, b, a, b, w) for a, b, w in edges]
    return Graph(ents, rels, [])


def _planted(groups: int = 8, size: int = 40) -> list[tuple[str, str, float]]:
    rng = np.random.default_rng(11)
    nodes = [f"g{g:02d}n{i:02d}" for g in range(groups) for i in range(size)]
    edges = []
    for x, a in enumerate(nodes):
        for b in nodes[x + 1 :]:
            same = a[:3] == b[:3]
            if rng.random() < (0.1 if same else 0.01):
                edges.append((a, b, float(rng.integers(1, 5))))
    return edges


def _previous(comms: list[Community]) -> list[Previous]:
    return [Previous(c.id, c.level, c.community, c.parent, tuple(c.entity_ids), c.graph_basis) for c in comms]


def _members(comms: list[Community]) -> list[tuple[int, list[str]]]:
    return sorted((c.level, c.entity_ids) for c in comms)


def _shape(comms: list[Community]) -> list[tuple[str, int, int, int]]:
    return [(c.id, c.community, c.level, c.parent) for c in comms]


def test_a_rerun_from_the_stored_partition_changes_nothing():
    g = _graph(_planted())
    first = detect_communities(g, 10, SEED)
    assert {c.level for c in first} >= {0, 1}, "the graph is big enough for a hierarchy"
    again = detect_communities(g, 10, SEED, _previous(first))
    assert _shape(again) == _shape(first)
    assert [c.graph_basis for c in again] == [c.graph_basis for c in first]


def test_a_new_entity_moves_only_the_region_it_touches():
    edges = _planted()
    first = detect_communities(_graph(edges), 10, SEED)
    touched = {"g03n04", "g03n17"}
    g2 = _graph(edges + [("g03n04", "zz-new", 3.0), ("g03n17", "zz-new", 2.0)])
    second = detect_communities(g2, 10, SEED, _previous(first))

    old = {c.id for c in first}
    region = {e for c in first if c.level == 0 and touched & set(c.entity_ids) for e in c.entity_ids}
    outside = [c for c in first if not region & set(c.entity_ids)]
    assert len(outside) > len(first) / 2
    numbers = {c.id: c.community for c in second}
    assert all(numbers.get(c.id) == c.community for c in outside), "the rest keeps its ids and numbers"
    changed = [c for c in second if c.id not in old]
    assert changed and all(set(c.entity_ids) <= region | {"zz-new"} for c in changed)
    assert len(changed) <= len(second) // 10
    assert min(c.community for c in changed) > max(c.community for c in first), "new numbers never reuse old ones"
    assert any("zz-new" in c.entity_ids for c in second if c.level == 0)

    # the same change clustered from scratch moves communities far from it: what stability buys
    fresh_changed = [c for c in detect_communities(g2, 10, SEED) if c.id not in old]
    assert len(fresh_changed) > 5 * len(changed)
    assert any(not set(c.entity_ids) <= region | {"zz-new"} for c in fresh_changed)


def test_removing_the_addition_keeps_the_rest_and_the_hierarchy_consistent():
    edges = _planted()
    first = detect_communities(_graph(edges), 10, SEED)
    added = detect_communities(_graph(edges + [("g05n01", "zz-new", 4.0)]), 10, SEED, _previous(first))
    back = detect_communities(_graph(edges), 10, SEED, _previous(added))
    region = {e for c in added if c.level == 0 and "zz-new" in c.entity_ids for e in c.entity_ids}
    back_ids = {c.id for c in back}
    assert all(c.id in back_ids for c in added if not region & set(c.entity_ids))
    assert not any("zz-new" in c.entity_ids for c in back)
    for comms in (added, back):
        by = {c.community: c for c in comms}
        for c in comms:
            if c.parent >= 0:
                assert by[c.parent].level == c.level - 1 and set(c.entity_ids) <= set(by[c.parent].entity_ids)
                assert c.community in by[c.parent].children
            assert c.level == 0 or c.parent >= 0
        members = [e for c in comms if c.level == 0 for e in c.entity_ids]
        assert len(members) == len(set(members)) == len({n for a, b, _ in edges for n in (a, b)}) + (comms is added)


def test_other_settings_ignore_the_stored_partition():
    g = _graph(_planted())
    first = detect_communities(g, 10, SEED)
    other = detect_communities(g, 10, 7, _previous(first))
    assert _members(other) == _members(detect_communities(g, 10, 7)), "another seed clusters from scratch"
    smaller = detect_communities(g, 6, SEED, _previous(first))
    assert _members(smaller) == _members(detect_communities(g, 6, SEED))
    assert _members(other) != _members(first)
