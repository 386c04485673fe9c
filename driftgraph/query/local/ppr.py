"""Personalized PageRank ranking of local search's chunks (``local.ranking: ppr``; HippoRAG 2's mechanism).

The bridge follows the single strongest link into each chunk; a chunk that two independent paths from the
question reach (the middle of a 3- or 4-hop chain) gets no more credit than one a single path reaches. PPR
gets that right by construction: a random walk restarted at the question's seeds (entry entities weighted
by similarity and specificity; chunk vector hits share ``ppr.passage_weight`` x their summed similarity by
a softmax whose temperature is ``ppr.passage_relative_temperature`` x their similarity spread) spends its
time where paths from many seeds meet. The graph is the neighbourhood the expansion and the bridge
(``multihop``, hops past the second) found, the RELATED edges among its entities that the bridge's query
returned (``ppr.known_relations``), plus, with ``ppr.fetch``, one more round trip
(``cypher/query/local_ppr.cypher``): every candidate chunk's entity mentions, the other chunks that the
best ``ppr.frontier`` chunks' entities appear in, and RELATED edges among the entities. Power iteration in
numpy on the edge lists (no dense matrix). The walk is long (``ppr.damping`` 0.85: ~7 steps before a restart,
so it reaches a chain's third and fourth link), and a chunk's mass enters the score as a root of its share of
the best chunk's (``ppr.mass_exponent``): each chunk-entity-chunk step divides the mass by the degrees it
passes, so linear mass would leave a chunk two steps out with a few hundredths. Each chunk keeps the hop and
path (``via``) of its shortest route from a seed, so the trace explains the rank the walk gave it.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from driftgraph.query.local.entry import EntryResult
from driftgraph.query.local.neighbourhood import Neighbourhood, Row, Walk
from driftgraph.query.local.rank import idf, score_chunks

if TYPE_CHECKING:
    from driftgraph.config import PprConfig
    from driftgraph.query.local.run import LocalRun


def walk_graph(run: LocalRun, entry: EntryResult, found: Neighbourhood) -> Neighbourhood:
    """Fetch the neighbourhood (``ppr.fetch``: one round trip), walk it; a new neighbourhood holding the ``Walk``.
    The frontier leaves out the seed chunks: the expansion already fetched the chunks their rare entities lead
    to, so a hop further starts from what the second hop found."""
    cfg = run.settings.ppr
    mentions: Sequence[Row] = ()
    relations: Sequence[Row] = ()
    if cfg.fetch and found.chunks:
        scored = score_chunks(found, entry, run.settings)
        seeded = set(entry.seeds)
        exclusions = run.exclusions(entry.excluded_ids)
        row = run.store.read(
            "query/local_ppr",
            vector=run.vector_list(),
            chunk_ids=sorted({sc.id for sc in scored}),
            frontier_ids=[sc.id for sc in scored if sc.id not in seeded][: cfg.frontier],
            exclude_ids=list(exclusions.ids),
            exclude_titles=list(exclusions.titles),
            max_df=cfg.max_df,
            per_entity=cfg.chunks_per_entity,
        )[0]
        run.trace.round_trips += 1
        found = found.grown(chunks=row["chunks"])
        mentions, relations = row["mentions"], row["relations"]
    result = walk(found, entry, cfg, mentions, [*found.walk_relations, *relations])
    run.trace.extra["ppr"] = {
        "nodes": result.nodes,
        "edges": result.edges,
        "relations": result.relations,
        "iterations": result.iterations,
    }
    return found.grown(walk=result)


def walk(
    found: Neighbourhood,
    entry: EntryResult,
    cfg: PprConfig,
    mentions: Sequence[Row],
    relations: Sequence[Row],
) -> Walk:
    """Build the graph from the neighbourhood's links and the fetched mentions, seed it, iterate (pure)."""
    n_chunks = max(entry.chunk_count, 1)
    idf_max = math.log(n_chunks + 1)
    # Neo4j's lists come back in no fixed order; the graph is built from sorted ones, so its node numbering, the
    # power iteration's sums and the routes' tie-breaks are the same on every run
    chunk_ids = sorted({c["id"] for c in found.chunks})
    links = sorted([*found.links, *mentions], key=_link_order)  # bridge links name their frontier chunk
    relations = sorted(relations, key=lambda rel: (rel["source"], rel["target"]))
    graph = _Graph()
    for cid in chunk_ids:
        graph.node(("c", cid))
    titles: dict[str, str] = {}
    df: dict[str, int] = {}
    for link in links:
        titles[link["entity"]] = link.get("title") or link["entity"]
        df[link["entity"]] = int(link.get("df") or 1)
        graph.edge(("c", link["chunk"]), ("e", link["entity"]), 1.0)
        named = link.get("synonym_of")  # a bridge link across SYN: the frontier chunk names the synonym
        if named:
            titles[named["id"]] = named["title"] or named["id"]
            graph.edge(("c", link["via"]), ("e", named["id"]), 1.0)
            graph.edge(("e", named["id"]), ("e", link["entity"]), 1.0)
        elif link.get("via"):  # a seed or bridge link names the chunk it hopped from, which mentions the entity
            graph.edge(("c", link["via"]), ("e", link["entity"]), 1.0)
    related = sum(graph.edge(("e", rel["source"]), ("e", rel["target"]), cfg.relation_weight) for rel in relations)
    seeds = _seeds(entry, cfg, df, n_chunks, idf_max)
    for key in seeds:
        graph.node(key)
    mass, iterations = graph.pagerank(seeds, cfg.damping, cfg.iterations, cfg.tolerance)
    chunk_mass = {k[1]: m for k, m in mass.items() if k[0] == "c"}
    top = max(chunk_mass.values(), default=0.0)
    out = Walk(nodes=len(graph.index), edges=len(graph.src) // 2, relations=related, iterations=iterations)
    # rounded to 12 places: chunks the graph makes equal (two ends of a symmetric chain) get their sums in
    # different orders and differ in the last bits; rounded, they tie and the id decides
    out.mass = {cid: (round(m / top, 12) ** cfg.mass_exponent if top > 0 else 0.0) for cid, m in chunk_mass.items()}
    out.depth, out.via = graph.routes(entry, titles)
    return out


def _link_order(link: Row) -> tuple[str, str, str, str]:
    """A total order on links: chunk, entity, the chunk it hopped from, the synonym it crossed."""
    return (link["chunk"], link["entity"], link.get("via") or "", (link.get("synonym_of") or {}).get("id") or "")


def _seeds(
    entry: EntryResult, cfg: PprConfig, df: dict[str, int], n_chunks: int, idf_max: float
) -> dict[tuple[str, str], float]:
    """Restart weights: entities by similarity x idf / idf_max (a rare name is a sharper seed), chunk hits by
    ``_passage_weights``; negatives and zeros left out."""
    seeds: dict[tuple[str, str], float] = {}
    for e in entry.entities:
        spec = idf(df.get(e.id, 1), n_chunks) / idf_max
        w = max(float(e.similarity if e.similarity is not None else 0.5), 0.0) * spec
        if w > 0:
            seeds[("e", e.id)] = w
    for cid, w in _passage_weights(entry, cfg):
        if w > 0:
            seeds[("c", cid)] = seeds.get(("c", cid), 0.0) + w
    return seeds


def _passage_weights(entry: EntryResult, cfg: PprConfig) -> list[tuple[str, float]]:
    """The chunk hits' share of the restart: ``passage_weight`` x their summed similarity in all, split by
    softmax(similarity / tau). In proportion to similarity, sixty hits whose cosines lie close together
    restart the walk almost evenly, and links from a middling hit count nearly as much as links from the one
    hit that clearly answers the first step. tau is ``passage_relative_temperature`` x the standard deviation
    of the hits' similarities: embedders differ in how closely their cosines crowd, and a temperature in cosine
    units tuned on one would be flat or winner-take-all on another. The total stays as before, so the
    entities' share of the restart (what carries a rare name the question spells out) does not shrink.
    Relative temperature 0, or hits that all score the same: in proportion to similarity."""
    hits = [(h.id, h.similarity) for h in entry.chunk_hits if h.similarity > 0]
    sims = [sim for _, sim in hits]
    spread = float(np.std(sims)) if sims else 0.0
    tau = cfg.passage_relative_temperature * spread
    if not hits or tau <= 1e-12:
        return [(cid, cfg.passage_weight * sim) for cid, sim in hits]
    total = cfg.passage_weight * sum(sims)
    best = max(sims)
    exp = [math.exp((sim - best) / tau) for sim in sims]
    z = sum(exp)
    return [(cid, total * e / z) for (cid, _), e in zip(hits, exp, strict=True)]


class _Graph:
    """An undirected weighted graph as edge lists (both directions), nodes interned to indexes."""

    def __init__(self) -> None:
        self.index: dict[tuple[str, str], int] = {}
        self.keys: list[tuple[str, str]] = []
        self.src: list[int] = []
        self.dst: list[int] = []
        self.w: list[float] = []
        self._seen: set[tuple[int, int]] = set()

    def node(self, key: tuple[str, str]) -> int:
        i = self.index.get(key)
        if i is None:
            i = self.index[key] = len(self.keys)
            self.keys.append(key)
        return i

    def edge(self, a: tuple[str, str], b: tuple[str, str], weight: float) -> bool:
        """Add the edge unless it is a loop, weightless or already there; says whether it was added."""
        i, j = self.node(a), self.node(b)
        if i == j or weight <= 0 or (min(i, j), max(i, j)) in self._seen:
            return False
        self._seen.add((min(i, j), max(i, j)))
        self.src += [i, j]
        self.dst += [j, i]
        self.w += [weight, weight]
        return True

    def pagerank(
        self, seeds: dict[tuple[str, str], float], damping: float, iterations: int, tolerance: float
    ) -> tuple[dict[tuple[str, str], float], int]:
        """``r = (1 - d) p + d (W r + dangling(r) p)``, W column-normalised; stops when the L1 change is below
        ``tolerance``. Returns the mass per node and the iterations run."""
        n = len(self.keys)
        if n == 0 or not seeds:
            return {}, 0
        p = np.zeros(n)
        for key, weight in seeds.items():
            p[self.index[key]] += weight
        p /= p.sum()
        src = np.asarray(self.src, dtype=np.int64)
        dst = np.asarray(self.dst, dtype=np.int64)
        w = np.asarray(self.w, dtype=np.float64)
        out_w = np.bincount(src, weights=w, minlength=n)
        norm = w / out_w[src] if len(src) else w
        dangling = out_w == 0
        r = p.copy()
        done = 0
        for done in range(1, iterations + 1):  # noqa: B007 (the count is reported)
            spread = np.bincount(dst, weights=norm * r[src], minlength=n) if len(src) else np.zeros(n)
            new = (1 - damping) * p + damping * (spread + r[dangling].sum() * p)
            delta = float(np.abs(new - r).sum())
            r = new
            if delta < tolerance:
                break
        return {key: float(r[i]) for i, key in enumerate(self.keys)}, done

    def routes(self, entry: EntryResult, titles: dict[str, str]) -> tuple[dict[str, int], dict[str, str]]:
        """Breadth-first from the seeds over chunk-entity-chunk steps: a chunk hit or a chunk naming an entry
        entity is hop 1; a chunk sharing an entity with a hop-k chunk is hop k+1, ``via`` the entity titles."""
        adj: dict[int, list[int]] = {}
        for i, j in zip(self.src, self.dst, strict=True):
            adj.setdefault(i, []).append(j)
        depth: dict[str, int] = {}
        via: dict[str, str] = {}
        queue: deque[tuple[int, int, str]] = deque()
        for h in entry.chunk_hits:
            hit = self.index.get(("c", h.id))
            if hit is not None and h.id not in depth:
                depth[h.id], via[h.id] = 1, ""
                queue.append((hit, 1, ""))
        for e in entry.entities:
            node = self.index.get(("e", e.id))
            for j in adj.get(node, []) if node is not None else []:
                kind, cid = self.keys[j]
                if kind == "c" and cid not in depth:
                    depth[cid], via[cid] = 1, str(e.title or e.id)
                    queue.append((j, 1, via[cid]))
        while queue:
            i, d, path = queue.popleft()
            for k in sorted(adj.get(i, [])):
                if self.keys[k][0] != "e":
                    continue
                title = titles.get(self.keys[k][1], self.keys[k][1])
                for j in sorted(adj.get(k, [])):
                    kind, cid = self.keys[j]
                    if kind == "c" and cid not in depth:
                        depth[cid] = d + 1
                        via[cid] = f"{path} > {title}" if path else title
                        queue.append((j, d + 1, via[cid]))
        return depth, via
