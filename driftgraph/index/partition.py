"""Hierarchical Leiden that stays put: a community whose neighbourhood did not change keeps its members.

Run on a graph alone (a first run, ``--reset``) this is hierarchical Leiden as graspologic-native does it:
Leiden on the whole graph, then Leiden again on each community of ``max_cluster_size`` entities or more,
level after level, until nothing of that size can be split. Given the previous run's communities, a
previous community is *clean* when every edge touching its members is as it was (same ends, same
weight). Each Leiden call then sees every clean community of its level as one node (and, inside changed
communities, their clean sub-communities), starts from the previous communities, and optimises the same
objective as a fresh run over the same nodes: what a change does not touch is already at an optimum and
stays, a clean community that comes out alone is kept with its whole subtree without recomputing it, and
only changed communities are split again below. A clean community can still be merged into a neighbour
when the change tips the balance (that is the objective's choice, and is counted as a change).

Every Leiden call's seed is derived from ``index.seed`` and the nodes it clusters, never drawn in
sequence: a region's result does not depend on how many other regions were clustered before it. The
price of stability is history: an incremental run's partition can differ from what a fresh run on the
same graph finds (``index --reset``, or ``index.stable_communities: false``, re-clusters from scratch).
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

Adjacency = dict[str, dict[str, float]]


@dataclass(frozen=True)
class Previous:
    """A community as the previous run stored it (its number, its parent's number, its graph basis)."""

    id: str
    level: int
    number: int
    parent: int
    members: tuple[str, ...]
    graph_basis: str | None


@dataclass
class Cluster:
    level: int
    members: list[str]
    parent: int  # index in the output list, -1 for a root


def _digest(*parts: object) -> bytes:
    return hashlib.sha256("\x00".join(map(str, parts)).encode()).digest()


def params_key(max_cluster_size: int, seed: int) -> str:
    """Bases made under other clustering settings never match: a settings change re-clusters from scratch."""
    return _digest("leiden", max_cluster_size, seed).hex()[:8]


def graph_basis(adj: Adjacency, members: Iterable[str], key: str) -> str:
    """Hash of every edge touching ``members`` (ends and weight): equal bases, same neighbourhood."""
    h = hashlib.sha256(key.encode())
    for m in sorted(members):
        h.update(f"\x01{m}".encode())
        if m not in adj:
            h.update(b"\x02missing")
            continue
        for n in sorted(adj[m]):
            h.update(f"\x00{n}\x00{adj[m][n]!r}".encode())
    return f"{key}:{h.hexdigest()[:32]}"


def adjacency(edges: Iterable[tuple[str, str, float]]) -> Adjacency:
    adj: Adjacency = defaultdict(dict)
    for a, b, w in edges:
        adj[a][b] = adj[a].get(b, 0.0) + w
        adj[b][a] = adj[b].get(a, 0.0) + w
    return dict(adj)


class _Partitioner:
    def __init__(self, adj: Adjacency, max_cluster_size: int, seed: int, previous: Sequence[Previous]) -> None:
        self.adj = adj
        self.max = max_cluster_size
        self.seed = seed
        self.key = params_key(max_cluster_size, seed)
        prev = [p for p in previous if p.graph_basis and p.graph_basis.startswith(self.key + ":")]
        self.prev_at: dict[int, dict[str, Previous]] = defaultdict(dict)  # level -> node -> community
        self.children: dict[tuple[int, int], list[Previous]] = defaultdict(list)  # (level, number) -> children
        for p in sorted(prev, key=lambda p: p.id):
            for m in p.members:
                self.prev_at[p.level][m] = p
            if p.parent >= 0:
                self.children[(p.level - 1, p.parent)].append(p)
        self.depth = max(self.prev_at, default=-1) + 1
        self._clean: dict[str, bool] = {}
        self.out: list[Cluster] = []

    def clean(self, p: Previous) -> bool:
        if p.id not in self._clean:
            self._clean[p.id] = graph_basis(self.adj, p.members, self.key) == p.graph_basis
        return self._clean[p.id]

    def keep(self, p: Previous, parent: int) -> None:
        """A clean community and its previous subtree, as they were."""
        self.out.append(Cluster(p.level, sorted(p.members), parent))
        idx = len(self.out) - 1
        for child in self.children.get((p.level, p.number), []):
            self.keep(child, idx)

    def region(self, nodes: set[str], level: int, parent: int) -> None:
        """Communities of ``nodes`` at ``level`` (under output cluster ``parent``), their subtrees too."""
        at = self.prev_at.get(level, {})
        candidates = {at[n].id: at[n] for n in nodes if n in at}
        clean = {i: p for i, p in candidates.items() if set(p.members) <= nodes and self.clean(p)}
        groups = self._leiden(nodes, level, clean)
        if parent >= 0 and len(groups) <= 1:
            return  # Leiden cannot split this community: it stays a leaf, as in graspologic
        whole = {tuple(sorted(p.members)): p for p in clean.values()}
        for g in groups:
            kept = whole.get(tuple(g))
            if kept is not None:
                self.keep(kept, parent)
                continue
            self.out.append(Cluster(level, g, parent))
            if len(g) >= self.max:
                self.region(set(g), level + 1, len(self.out) - 1)

    def _atoms(self, nodes: set[str], level: int, clean: dict[str, Previous]) -> dict[str, str]:
        """Node -> atom. A clean community of this level moves as one node, and so does, for any other
        node, the coarsest clean previous community below this level that holds it: Leiden can merge them
        with others (their parent changes) but never tear one apart. Any other node is its own atom."""
        atom: dict[str, str] = {}
        for p in clean.values():
            for m in p.members:
                atom[m] = f"community:{p.id}"
        for n in sorted(nodes - set(atom)):
            atom[n] = n
            for lvl in range(level + 1, self.depth):
                deeper = self.prev_at[lvl].get(n)
                if deeper is None:
                    break
                if set(deeper.members) <= nodes and self.clean(deeper):
                    atom[n] = f"community:{deeper.id}"
                    break
        return atom

    def _leiden(self, nodes: set[str], level: int, clean: dict[str, Previous]) -> list[list[str]]:
        """Leiden on the subgraph of ``nodes`` with clean communities contracted, warm-started from the
        previous communities of this level; groups sorted."""
        from graspologic_native import leiden

        atom = self._atoms(nodes, level, clean)
        weights: dict[tuple[str, str], float] = defaultdict(float)
        for a in sorted(nodes):
            for b, w in self.adj.get(a, {}).items():
                if b in nodes and a < b:
                    x, y = sorted((atom[a], atom[b]))
                    if x == y:  # an atom's inner weight goes on an edge to a twin node (Leiden does not count
                        y = x + ":core"  # a self-loop in the degree), so degrees and inner weights stay right
                    weights[(x, y)] += w
        linked = {n for n in nodes if any(b in nodes for b in self.adj.get(n, {}))}
        singles = [[n] for n in sorted(nodes - linked)]  # no edge inside this region: a leaf of its own
        if not weights:
            return singles
        edges = [(x, y, w) for (x, y), w in sorted(weights.items())]
        at = self.prev_at.get(level, {})
        start: dict[str, int] = {}
        labels: dict[str, int] = {}
        for n in sorted(linked):
            p = at.get(n)
            if p is not None:
                start.setdefault(atom[n], labels.setdefault(p.id, len(labels)))
        fresh = len(labels)
        for x in sorted({x for e in edges for x in e[:2]}):
            if x.endswith(":core") and x[:-5] in start:
                start[x] = start[x[:-5]]
            elif x not in start:
                start[x], fresh = fresh, fresh + 1
        seed = int.from_bytes(_digest(self.seed, level, *sorted(linked))[:8], "little")
        _, found = leiden(edges, starting_communities=start if labels else None, seed=seed)
        grouped: dict[int, list[str]] = defaultdict(list)
        for n in linked:
            grouped[found[atom[n]]].append(n)
        return sorted([sorted(g) for g in grouped.values()] + singles)


def hierarchy(
    edges: Sequence[tuple[str, str, float]], max_cluster_size: int, seed: int, previous: Sequence[Previous] = ()
) -> tuple[list[Cluster], Adjacency]:
    """Clusters (parents before children) and the adjacency they were computed on."""
    adj = adjacency(edges)
    part = _Partitioner(adj, max_cluster_size, seed & 0xFFFFFFFFFFFFFFFF, previous)
    if adj:
        part.region(set(adj), 0, -1)
    return part.out, adj
