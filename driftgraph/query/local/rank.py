"""Ranking of the expansion's candidates, per source, into ``Candidate`` lists the fill consumes.

Chunks (README "Local search"): ``score = similarity + seed_hop_weight * seed_support + entity_hop_weight *
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
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from driftgraph.query.budget import Candidate
from driftgraph.query.local import render
from driftgraph.query.local.entry import EntryResult

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


def rank_all(expansion: dict[str, Any], entry: EntryResult, settings: LocalConfig, count_many: CountMany) -> Ranked:
    """Rank every source, render each candidate's row and count its tokens exactly (one batched call)."""
    out = Ranked()
    _chunks(out, expansion, entry, settings)
    _entities(out, expansion)
    _relationships(out, expansion, entry)
    _reports(out, expansion, settings.report_summary)
    _claims(out, expansion, entry)
    everything = [c for items in out.candidates.values() for c in items]
    everything += [c.short for c in everything if c.short is not None]
    for c, n in zip(everything, count_many([c.payload["row"] for c in everything]), strict=True):
        c.tokens = n
    return out


def _make(source: str, rank: int, item_id: str, score: float, payload: dict[str, Any], hop: str | None) -> Candidate:
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
    row: dict[str, Any]


def _best_links(links: list[dict[str, Any]], weight: Callable[[dict[str, Any]], float]) -> dict[str, tuple[float, Any]]:
    best: dict[str, tuple[float, Any]] = {}
    for link in links:
        w = weight(link)
        if w > best.get(link["chunk"], (0.0, None))[0]:
            best[link["chunk"]] = (w, link)
    return best


def graph_links(x: dict[str, Any]) -> list[dict[str, Any]]:
    """Every chunk-entity link the expansion and the bridge found (seed, entity, then bridge links): the graph
    that the walk runs on and whose entities the bridge asks RELATED edges for."""
    return [*(x.get("seed_links") or []), *(x.get("entity_links") or []), *(x.get("bridge_links") or [])]


def score_chunks(x: dict[str, Any], entry: EntryResult, s: LocalConfig) -> list[ScoredChunk]:
    """Every fetched chunk with its score, best first (ties by id); bridge links (``x["bridge_links"]``, from
    ``multihop``) carry their own weight."""
    n = max(entry.chunk_count, 1)
    idf_max = math.log(n + 1)
    hit_sim = {h.id: h.similarity for h in entry.chunk_hits}
    ent_sim = {e.id: float(e.similarity or 0.0) for e in entry.entities}
    seed_support = _best_links(
        x.get("seed_links") or [], lambda k: idf(k["df"], n) / idf_max * hit_sim.get(k["via"], 0.0)
    )
    entity_support = _best_links(
        x.get("entity_links") or [], lambda k: idf(k["df"], n) / idf_max * ent_sim.get(k["entity"], 0.0)
    )
    bridge_support = _best_links(x.get("bridge_links") or [], lambda k: float(k["weight"]))
    walk = x.get("ppr")  # a ppr.Walk when local.ranking is "ppr": its mass joins the support
    scored: list[ScoredChunk] = []
    seen: set[str] = set()
    for c in x.get("chunks") or []:
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
        scored.append(ScoredChunk(c["id"], sim + support, sim, support, hop, via, depth, c))
    scored.sort(key=lambda t: (-t.score, t.id))
    return scored


def _chunks(out: Ranked, x: dict[str, Any], entry: EntryResult, s: LocalConfig) -> None:
    gate = s.min_similarity if entry.strict else s.chunk_min_similarity
    kept: list[Candidate] = []
    for sc in score_chunks(x, entry, s):
        c = sc.row
        payload = {
            "text": c.get("text") or "",
            "similarity": sc.similarity,
            "support": sc.support,
            "via": sc.via or None,
            "depth": sc.depth,
        }
        if sc.similarity < gate and (sc.support <= 0 or entry.strict):
            tokens = int(c.get("n_tokens") or 0)
            cand = Candidate("chunk", c["id"], tokens, sc.score, rank=0, hop=sc.hop, payload=payload)
            out.dropped.append((cand, "off_topic" if entry.strict else "below_threshold"))
            continue
        kept.append(_make("chunk", len(kept) + 1, c["id"], sc.score, payload, sc.hop))
    out.candidates["chunk"] = kept


def _entities(out: Ranked, x: dict[str, Any]) -> None:
    rows = sorted(x.get("entities") or [], key=lambda e: (e["entry_rank"], e["id"]))
    out.candidates["entity"] = [
        _make("entity", i, e["id"], float(e.get("similarity") or 0.0), e, "entry") for i, e in enumerate(rows, start=1)
    ]


def _relationships(out: Ranked, x: dict[str, Any], entry: EntryResult) -> None:
    order = {e.id: i for i, e in enumerate(entry.entities)}
    rows = sorted(
        x.get("relationships") or [],
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


def _reports(out: Ranked, x: dict[str, Any], summaries: bool) -> None:
    def score(r: dict[str, Any]) -> float:
        return float(r.get("similarity") or 0.0) + 0.05 * math.log1p(r.get("matched") or 0)

    rows = sorted(x.get("reports") or [], key=lambda r: (-score(r), -(r.get("rank") or 0.0), r["id"]))
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


def _claims(out: Ranked, x: dict[str, Any], entry: EntryResult) -> None:
    order = {e.id: i for i, e in enumerate(entry.entities)}
    rows = sorted(x.get("claims") or [], key=lambda c: (order.get(c["entity_id"], len(order)), c["id"]))
    out.candidates["claim"] = [_make("claim", i, c["id"], 0.0, c, "entity") for i, c in enumerate(rows, start=1)]


def rrf_chunks(lists: list[list[Candidate]], k: int) -> list[Candidate]:
    """Chunk candidate lists fused by reciprocal rank (``sum 1 / (k + rank)``, ties by id); the first list's
    candidate object wins for a chunk both hold. Each payload records its rank in every list (``fused``)."""
    fused: dict[str, float] = {}
    first: dict[str, Candidate] = {}
    ranks: dict[str, list[int | None]] = {}
    for li, cands in enumerate(lists):
        for pos, c in enumerate(cands, start=1):
            fused[c.id] = fused.get(c.id, 0.0) + 1.0 / (k + pos)
            first.setdefault(c.id, c)
            ranks.setdefault(c.id, [None] * len(lists))[li] = pos
    order = sorted(fused, key=lambda i: (-fused[i], i))
    out = []
    for cid in order:
        c = first[cid]
        c.payload = {**(c.payload or {}), "fused": ranks[cid]}
        out.append(c)
    return out
