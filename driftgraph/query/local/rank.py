"""Ranking of the expansion's candidates, per source, into ``Candidate`` lists the fill consumes.

Chunks (docs/concepts/local-search.md): ``score = similarity + seed_hop_weight * seed_support + entity_hop_weight *
entity_support``. Seed support: the chunk shares a rare entity with one of the top ``seed_chunks`` vector hits
(``idf(entity) / idf_max * similarity(seed)``, the strongest link counts); entity support: the chunk mentions
a kept entry entity (``idf / idf_max * similarity(entity)``). So a vector hit stays where similarity puts it
unless the graph supports it, and a chunk similarity missed (the second hop of a multi-hop question) enters
when it shares a rare name with the best evidence. ``hop`` records how each chunk came in. An entry
entity's best chunks seed the second hop too (``entity_seed_chunks``); their links carry no seed support
(they have no chunk-hit similarity) and count through the PPR walk, which the links join as edges.
Entities keep their entry order; relationships: in-network first, then by the anchor entity's rank and
weight; reports: query similarity plus matched-entity count (each with its summary as a shorter form, which the
fill uses when the full report does not fit); claims: by their entity's rank.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from driftgraph.query import tables as render
from driftgraph.query.budget import Candidate
from driftgraph.query.local.entry import EntryResult
from driftgraph.query.local.neighbourhood import Neighbourhood, Row

if TYPE_CHECKING:
    from driftgraph.config import LocalConfig

CountMany = Callable[[list[str]], list[int]]


@dataclass
class Ranked:
    """Candidates per source (best first) and items dropped before the fill, with reasons."""

    candidates: dict[str, list[Candidate]] = field(default_factory=dict)
    dropped: list[tuple[Candidate, str]] = field(default_factory=list)


def idf(df: int, n_chunks: int) -> float:
    return math.log((n_chunks + 1) / (df + 0.5))


def rank_all(found: Neighbourhood, entry: EntryResult, settings: LocalConfig, count_many: CountMany) -> Ranked:
    """Rank every source, render each candidate's row and count its tokens exactly (one batched call)."""
    out = Ranked()
    x = found.expansion
    _chunks(out, found, entry, settings)
    _entities(out, x.entities)
    _relationships(out, x.relationships, entry)
    _reports(out, x.reports, settings.report_summary)
    _claims(out, x.claims, entry)
    everything = [c for items in out.candidates.values() for c in items]
    everything += [c.short for c in everything if c.short is not None]
    for c, n in zip(everything, count_many([c.payload["row"] for c in everything]), strict=True):
        c.tokens = n
    return out


def _make(source: str, rank: int, item_id: str, score: float, payload: Row, hop: str | None) -> Candidate:
    text = render.row(source, rank, payload)
    return Candidate(source, item_id, 0, score, rank=rank, hop=hop, payload={**payload, "row": text})


@dataclass
class ScoredChunk:
    """A chunk candidate's score parts: ``score = similarity + support``; ``depth`` is the hop that found it
    (1 = vector hit or entry-entity mention, 2 = shared rare entity with a seed chunk, 3+ = the bridge; with
    ``ranking: ppr`` the shortest route from a seed in the walked graph, support plus ``ppr.weight`` x mass)."""

    id: str
    score: float
    similarity: float
    support: float
    hop: str
    via: str
    depth: int
    row: Row
    parts: dict[str, float] = field(default_factory=dict)  # the signals the presentation order (present.py) weighs
    links: dict[str, float] = field(default_factory=dict)  # chunk -> idf / idf_max of the rarest entity they share


def _best_links(links: Sequence[Row], weight: Callable[[Row], float]) -> dict[str, tuple[float, Any]]:
    best: dict[str, tuple[float, Any]] = {}
    for link in links:
        w = weight(link)
        if w > best.get(link["chunk"], (0.0, None))[0]:
            best[link["chunk"]] = (w, link)
    return best


def _chunk_links(seed_links: Sequence[Row], n: int) -> dict[str, dict[str, float]]:
    """Chunk pairs the second hop joined (a chunk and the seed chunk it shares a rare entity with), both ways,
    weighted by the rarest shared entity's ``idf / idf_max``."""
    idf_max = math.log(n + 1)
    out: dict[str, dict[str, float]] = {}
    for link in seed_links:
        a, b = link["chunk"], link.get("via")
        if not b or a == b:
            continue
        w = idf(link["df"], n) / idf_max
        for x, y in ((a, b), (b, a)):
            if w > out.setdefault(x, {}).get(y, 0.0):
                out[x][y] = w
    return out


def _entity_cover(links: Sequence[Row], weight: Callable[[Row], float]) -> dict[str, float]:
    """Per chunk, the summed weight of the distinct entry entities it names (each entity counted once)."""
    best: dict[tuple[str, str], float] = {}
    for link in links:
        key = (link["chunk"], link["entity"])
        best[key] = max(best.get(key, 0.0), weight(link))
    out: dict[str, float] = {}
    for (chunk, _), w in sorted(best.items()):
        out[chunk] = out.get(chunk, 0.0) + w
    return out


def score_chunks(found: Neighbourhood, entry: EntryResult, s: LocalConfig) -> list[ScoredChunk]:
    """Every fetched chunk with its score, best first (ties by id); bridge links (from ``multihop``) carry their
    own weight, and the walk's mass (``ranking: ppr``) joins the support."""
    n = max(entry.chunk_count, 1)
    idf_max = math.log(n + 1)
    hit_sim = {h.id: h.similarity for h in entry.chunk_hits}
    ent_sim = {e.id: float(e.similarity or 0.0) for e in entry.entities}
    x = found.expansion
    seed_support = _best_links(x.seed_links, lambda k: idf(k["df"], n) / idf_max * hit_sim.get(k["via"], 0.0))
    entity_support = _best_links(x.entity_links, lambda k: idf(k["df"], n) / idf_max * ent_sim.get(k["entity"], 0.0))
    bridge_support = _best_links(found.bridge_links, lambda k: float(k["weight"]))
    links = _chunk_links(x.seed_links, n)
    cover = _entity_cover(x.entity_links, lambda k: idf(k["df"], n) / idf_max * ent_sim.get(k["entity"], 0.0))
    walk = found.walk
    scored: list[ScoredChunk] = []
    seen: set[str] = set()
    for c in found.chunks:
        if c["id"] in seen:
            continue
        seen.add(c["id"])
        sim = float(c["similarity"]) if c.get("similarity") is not None else hit_sim.get(c["id"], 0.0)
        seed = seed_support.get(c["id"], (0.0, None))
        ent = entity_support.get(c["id"], (0.0, None))
        bridge = bridge_support.get(c["id"], (0.0, None))
        parts = {"seed_hop": s.seed_hop_weight * seed[0], "entity_hop": s.entity_hop_weight * ent[0]}
        support = parts["seed_hop"] + parts["entity_hop"] + s.bridge_weight * bridge[0]
        if walk is not None:
            support += s.ppr.weight * walk.mass.get(c["id"], 0.0)
        via, depth = "", 1
        if c["id"] in hit_sim:
            hop = "vector+graph" if support > 0 else "vector"
        elif bridge[1] is not None and not seed[0] and not ent[0]:
            hop, depth = "bridge", int(bridge[1]["hop"])
        elif walk is not None and not seed[0] and not ent[0]:
            hop = "ppr"
        else:
            hop = "seed_hop" if parts["seed_hop"] >= parts["entity_hop"] else "entity_hop"
            depth = 2 if hop == "seed_hop" else 1
        link = bridge[1] if hop == "bridge" else (seed[1] or ent[1])
        if link is not None:
            via = link.get("path") or link["title"] or link["entity"]
        if walk is not None and c["id"] in walk.depth:  # the shortest route from a seed in the walked graph
            depth, via = walk.depth[c["id"]], walk.via[c["id"]]
        signals = {
            "seed": seed[0],
            "entities": cover.get(c["id"], 0.0),
            "bridge": bridge[0],
            "mass": walk.mass.get(c["id"], 0.0) if walk is not None else 0.0,
        }
        scored.append(
            ScoredChunk(c["id"], sim + support, sim, support, hop, via, depth, c, signals, links.get(c["id"], {}))
        )
    scored.sort(key=lambda t: (-t.score, t.id))
    return scored


def _chunks(out: Ranked, found: Neighbourhood, entry: EntryResult, s: LocalConfig) -> None:
    gate = entry.chunk_gate(s)
    kept: list[Candidate] = []
    for sc in score_chunks(found, entry, s):
        c = sc.row
        payload = {
            "text": c.get("text") or "",
            "similarity": sc.similarity,
            "support": sc.support,
            "via": sc.via or None,
            "depth": sc.depth,
            "location": c.get("location"),  # page, slide or heading path (index/chunk.py); None for plain text
            "signals": sc.parts,
            "links": sc.links,
        }
        if sc.similarity < gate and (sc.support <= 0 or entry.strict):
            tokens = int(c.get("n_tokens") or 0)
            cand = Candidate("chunk", c["id"], tokens, sc.score, rank=0, hop=sc.hop, payload=payload)
            out.dropped.append((cand, "off_topic" if entry.strict else "below_threshold"))
            continue
        kept.append(_make("chunk", len(kept) + 1, c["id"], sc.score, payload, sc.hop))
    out.candidates["chunk"] = kept


def _entities(out: Ranked, entities: Sequence[Row]) -> None:
    rows = sorted(entities, key=lambda e: (e["entry_rank"], e["id"]))
    out.candidates["entity"] = [
        _make("entity", i, e["id"], float(e.get("similarity") or 0.0), e, "entry") for i, e in enumerate(rows, start=1)
    ]


def _relationships(out: Ranked, relationships: Sequence[Row], entry: EntryResult) -> None:
    order = {e.id: i for i, e in enumerate(entry.entities)}
    rows = sorted(
        relationships,
        key=lambda r: (
            not r["in_network"],
            order.get(r["entity_id"], len(order)),
            -(r.get("weight") or 0.0),
            -(r.get("combined_degree") or 0),
            r["id"],
        ),
    )
    kept: list[Candidate] = []
    seen: set[str] = set()
    for r in rows:
        if r["id"] in seen:
            continue  # an in-network relationship is reached from both ends
        seen.add(r["id"])
        hop = "in_network" if r["in_network"] else "neighbour"
        kept.append(_make("relationship", len(kept) + 1, r["id"], float(r.get("weight") or 0.0), r, hop))
    out.candidates["relationship"] = kept


def _reports(out: Ranked, reports: Sequence[Row], summaries: bool) -> None:
    def score(r: Row) -> float:
        return float(r.get("similarity") or 0.0) + 0.05 * math.log1p(r.get("matched") or 0)

    rows = sorted(reports, key=lambda r: (-score(r), -(r.get("rank") or 0.0), r["id"]))
    kept = []
    for i, r in enumerate(rows, 1):
        c = _make("report", i, r["id"], score(r), r, f"level {r.get('level')}")
        if summaries and r.get("summary") and r.get("summary") != r.get("full_content"):
            # the shorter form the fill may use when the full report does not fit what is left
            c.short = Candidate(
                "report",
                r["id"],
                0,
                c.score,
                rank=i,
                hop=c.hop,
                form="summary",
                payload={**r, "row": render.row("report", i, {**r, "full_content": r["summary"]})},
            )
        kept.append(c)
    out.candidates["report"] = kept


def _claims(out: Ranked, claims: Sequence[Row], entry: EntryResult) -> None:
    order = {e.id: i for i, e in enumerate(entry.entities)}
    rows = sorted(claims, key=lambda c: (order.get(c["entity_id"], len(order)), c["id"]))
    out.candidates["claim"] = [_make("claim", i, c["id"], 0.0, c, "entity") for i, c in enumerate(rows, start=1)]


def rrf_chunks(lists: list[list[Candidate]], k: int) -> list[Candidate]:
    """Chunk candidate lists fused by reciprocal rank (``sum 1 / (k + rank)``, ties by id); the first list's
    candidate wins for a chunk both hold. Each (new) candidate's payload records its rank in every list (``fused``)."""
    fused: dict[str, float] = {}
    first: dict[str, Candidate] = {}
    ranks: dict[str, list[int | None]] = {}
    for li, cands in enumerate(lists):
        for pos, c in enumerate(cands, start=1):
            fused[c.id] = fused.get(c.id, 0.0) + 1.0 / (k + pos)
            first.setdefault(c.id, c)
            ranks.setdefault(c.id, [None] * len(lists))[li] = pos
    order = sorted(fused, key=lambda i: (-fused[i], i))
    return [replace(first[cid], payload={**(first[cid].payload or {}), "fused": ranks[cid]}) for cid in order]
