"""Local search entry points (round trip 1): entity vector hits fused with fulltext hits, chunk vector hits.

``enter(run)`` is the stage: the query, then thresholds and fusion in Python (``select_entry``, pure), then the
gates the chunk and report hits face, every verdict recorded in the trace.

Entities: vector top ``entity_top_k * entity_oversample``, optionally fused with the entity fulltext index by
reciprocal rank fusion (RRF); then exclusions, an absolute cosine threshold (``min_similarity``), a threshold
relative to the best candidate (``relative_similarity``), and the top ``entity_top_k`` by fused score with the
id as the final tie-break. Chunks: the chunk index's top ``chunk_top_k`` hits are candidates in their own
right (plain vector retrieval is the floor the graph adds to). When no entity passes, the question is treated
as off-topic and chunks must clear the entity threshold too, so nothing is padded in; community reports then
face the index's calibrated report threshold, so the route that falls to "reports first" has reports drawn by
similarity (those above the reports' noise floor).

``min_similarity`` is resolved per question (``resolve_thresholds``): an explicit ``local.min_similarity`` wins,
else the value calibrated for this index (``store/calibration.py``, read in the same round trip), else
``local.min_similarity_fallback``; the trace's ``thresholds`` say which was used and where it came from.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from driftgraph.errors import EntryError, StoreError
from driftgraph.query.route import thematic_wording
from driftgraph.query.trace import EntryCandidate
from driftgraph.store.lucene import STOP_WORDS, WORD, or_query

if TYPE_CHECKING:
    from driftgraph.config import LocalConfig
    from driftgraph.query.local.run import LocalRun
    from driftgraph.store.db import Store

_WORD = re.compile(r"\w+", re.UNICODE)
# Words that carry no entity signal; a fulltext query made only of these is skipped.


@dataclass
class ChunkHit:
    """A vector hit on a chunk or a community report, as an entry candidate in its own right."""

    id: str
    similarity: float
    rank: int
    tokens: int = 0  # reports: n_tokens (for the trace item of a report the gate kept out)


@dataclass(frozen=True)
class Thresholds:
    """The entry gates one question was held to, and where each came from: ``config`` (an explicit
    ``local.min_similarity``), ``calibrated`` (the index's stored value) or ``fallback``
    (``local.min_similarity_fallback``: the index holds no calibrated value)."""

    min_similarity: float
    source: str
    report_min_similarity: float  # what a report hit must reach when no entity entered
    report_source: str
    chunk_min_similarity: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "min_similarity": {"value": self.min_similarity, "source": self.source},
            "report_min_similarity": {"value": self.report_min_similarity, "source": self.report_source},
            "chunk_min_similarity": {"value": self.chunk_min_similarity, "source": "config"},
        }


def resolve_thresholds(settings: LocalConfig, calibrated: Mapping[str, Any] | None = None) -> Thresholds:
    """An explicit ``min_similarity`` wins, then the index's calibrated value, then the fallback. Reports without
    an entity face the index's calibrated report threshold when it has one, else ``min_similarity``."""
    cal = calibrated or {}
    if settings.min_similarity is not None:
        value, source = float(settings.min_similarity), "config"
    elif cal.get("min_similarity") is not None:
        value, source = float(cal["min_similarity"]), "calibrated"
    else:
        value, source = float(settings.min_similarity_fallback), "fallback"
    if cal.get("report_min_similarity") is not None:
        report, report_source = float(cal["report_min_similarity"]), "calibrated"
    else:
        report, report_source = value, source
    return Thresholds(value, source, report, report_source, float(settings.chunk_min_similarity))


@dataclass
class EntryResult:
    """Kept entities (best first), every entity verdict, chunk hits, and which sources the index holds."""

    entities: list[EntryCandidate] = field(default_factory=list)
    candidates: list[EntryCandidate] = field(default_factory=list)
    chunk_hits: list[ChunkHit] = field(default_factory=list)
    report_hits: list[ChunkHit] = field(default_factory=list)
    present: dict[str, bool] = field(default_factory=dict)
    chunk_count: int = 0
    excluded_ids: list[str] = field(default_factory=list)
    off_topic: bool = False
    strict: bool = False  # off-topic and not a thematic question: chunks/reports must clear min_similarity
    best_entity: float | None = None
    best_chunk: float | None = None
    seeds: list[str] = field(default_factory=list)  # chunk hits past the gate that seed the second hop
    report_ids: list[str] = field(default_factory=list)  # report hits past the report gate
    thresholds: Thresholds | None = None  # None only for a result built by hand (then the settings' values)
    gated_reports: list[tuple[ChunkHit, str]] = field(default_factory=list)  # report hits the gate kept out

    def gates(self, settings: LocalConfig) -> Thresholds:
        return self.thresholds if self.thresholds is not None else resolve_thresholds(settings)

    def chunk_gate(self, settings: LocalConfig) -> float:
        """The similarity a chunk must reach without graph support: the entity threshold when off-topic."""
        t = self.gates(settings)
        return t.min_similarity if self.strict else t.chunk_min_similarity

    def report_gate(self, settings: LocalConfig, thematic: bool) -> float:
        """What a report hit must reach: nothing on thematic wording; with no entry entity, the index's report
        threshold (the route leads with reports, drawn by similarity); else the chunk gate."""
        if thematic:
            return -1.0
        if self.off_topic:
            return self.gates(settings).report_min_similarity
        return self.chunk_gate(settings)


def enter(run: LocalRun) -> EntryResult:
    """Round trip 1 and every entry verdict in the trace; the result knows its seed chunks and report ids.

    A thematic question names no one thing: its nearest reports enter whatever their cosine."""
    settings, rec = run.settings, run.trace
    found = run_entry(run.store, settings, run.vector, run.query, run.exclude)
    rec.round_trips += 1
    thematic = thematic_wording(run.query)
    entry = replace(found, strict=found.off_topic and not thematic)
    gate = entry.chunk_gate(settings)
    report_gate = entry.report_gate(settings, thematic)
    rec.extra["thresholds"] = {
        **entry.gates(settings).to_dict(),
        "applied": {"entity": entry.gates(settings).min_similarity, "chunk": gate, "report": report_gate},
    }
    for cand in entry.candidates:
        rec.add_entry(cand)
    gates: tuple[tuple[Literal["chunk", "report"], list[ChunkHit], float], ...] = (
        ("chunk", entry.chunk_hits, gate),
        ("report", entry.report_hits, report_gate),
    )
    for kind, hits, floor in gates:
        for hit in hits:
            ok = hit.similarity >= floor
            reason = None if ok else ("off_topic" if entry.strict else "below_threshold")
            rec.add_entry(
                EntryCandidate(
                    hit.id,
                    "",
                    round(hit.similarity, 4),
                    "kept" if ok else "dropped",
                    reason,
                    kind=kind,
                    similarity=hit.similarity,
                    vector_rank=hit.rank,
                )
            )
    report_reason = "off_topic" if entry.strict else "below_threshold"
    return replace(
        entry,
        seeds=[h.id for h in entry.chunk_hits if h.similarity >= gate][: settings.seed_chunks],
        report_ids=[h.id for h in entry.report_hits if h.similarity >= report_gate],
        gated_reports=[(h, report_reason) for h in entry.report_hits if h.similarity < report_gate],
    )


def fulltext_query(question: str) -> str:
    """A Lucene OR-query of the question's content words ('' if none).

    Words are lower-cased (so AND/OR/NOT are never operators) and escaped, so no user text acts as syntax.
    """
    return or_query(question, drop_stop_words=True, max_terms=32)


def entry_params(settings: LocalConfig, vector: Sequence[float], question: str) -> dict[str, Any]:
    """Parameters of ``cypher/query/local_entry.cypher``."""
    return {
        "vector": [float(x) for x in vector],
        "entity_k": max(1, math.ceil(settings.entity_top_k * settings.entity_oversample)),
        "fulltext": fulltext_query(question) if settings.hybrid else "",
        "fulltext_k": settings.fulltext_k,
        "chunk_k": settings.chunk_top_k,
        "report_k": settings.report_top_k,
    }


def run_entry(
    store: Store, settings: LocalConfig, vector: Sequence[float], question: str, exclude: Sequence[str]
) -> EntryResult:
    """One round trip, then thresholds and fusion in Python."""

    try:
        row = store.read("query/local_entry", **entry_params(settings, vector, question))[0]
    except StoreError as err:
        if "no such" in str(err).lower() and "index" in str(err).lower():
            raise EntryError(
                "the database holds no driftgraph index (its vector or fulltext indexes are missing): "
                "load one with `driftgraph import-graphrag DIR` or build one with `driftgraph index DIR`"
            ) from None
        raise
    return select_entry(row, settings, exclude, question, resolve_thresholds(settings, row.get("calibrated")))


def _words(text: str) -> list[str]:
    return [w.casefold() for w in WORD.findall(text)]


def title_in_question(title: str, question_words: Sequence[str]) -> bool:
    """The entity's whole title appears in the question as consecutive words (case-insensitive)."""
    t = _words(title)
    if not t or (len(t) == 1 and (len(t[0]) < 3 or t[0] in STOP_WORDS)):
        return False
    n = len(t)
    return any(list(question_words[i : i + n]) == t for i in range(len(question_words) - n + 1))


def named_rule(title: str, question: str, df: int | None, rare_chunks: int) -> str | None:
    """Why a title the question spells out is a specific name, or None for a generic noun ('country').

    More than one word, capitalised in the question (not as its first word), or mentioned in at most
    ``rare_chunks`` chunks.
    """
    words = _words(title)
    if len(words) > 1:
        return "named_multiword"
    tokens = WORD.findall(question)
    if any(t.casefold() == words[0] and t[:1].isupper() for t in tokens[1:]):
        return "named_capitalised"
    if df is not None and df <= rare_chunks:
        return "named_rare"
    return None


def select_entry(
    row: dict[str, Any],
    settings: LocalConfig,
    exclude: Sequence[str],
    question: str = "",
    thresholds: Thresholds | None = None,
) -> EntryResult:
    """Fuse, threshold and cut the raw entry rows (pure; unit-tested without a database).

    An entity whose title the question spells out as a specific name (``named_rule``) is a third ranked list in
    the fusion (longest title first) and passes the similarity thresholds: long LLM-written descriptions dilute
    a named entity's cosine. A generic noun the question happens to contain faces the thresholds like any hit.
    Each kept entity's ``rule`` says what kept it. ``thresholds`` default to the settings' own (no calibration).
    """
    gates = thresholds if thresholds is not None else resolve_thresholds(settings)
    out = EntryResult(
        present=dict(row.get("present") or {}), chunk_count=int(row.get("chunk_count") or 0), thresholds=gates
    )
    merged: dict[str, dict[str, Any]] = {}
    for rank, hit in enumerate(row.get("entity_vector") or [], start=1):
        merged.setdefault(hit["id"], {"id": hit["id"], "title": hit.get("title") or "", "sim": hit["similarity"]})
        merged[hit["id"]]["vrank"] = rank
        merged[hit["id"]]["df"] = hit.get("df")
    ft_hits = sorted(row.get("entity_fulltext") or [], key=lambda h: (-h["fulltext_score"], h["id"]))
    for rank, hit in enumerate(ft_hits, start=1):
        m = merged.setdefault(hit["id"], {"id": hit["id"], "title": hit.get("title") or "", "sim": hit["similarity"]})
        m["frank"] = rank
        m.setdefault("df", hit.get("df"))
    qwords = _words(question)
    for m in merged.values():
        m["named"] = title_in_question(m["title"], qwords)
        m["rule"] = named_rule(m["title"], question, m.get("df"), settings.named_rare_chunks) if m["named"] else None
    named = sorted((m for m in merged.values() if m["rule"]), key=lambda m: (-len(m["title"]), m["id"]))
    for rank, m in enumerate(named, start=1):
        m["trank"] = rank
    for m in merged.values():
        m["rrf"] = sum(1.0 / (settings.rrf_k + m[k]) for k in ("vrank", "frank", "trank") if k in m)
    excluded = {e.casefold() for e in exclude}
    ordered = sorted(merged.values(), key=lambda m: (-m["rrf"], -(m["sim"] if m["sim"] is not None else -2), m["id"]))
    eligible = [m for m in ordered if not _is_excluded(m, excluded) and m["sim"] is not None and "trank" not in m]
    best = max((m["sim"] for m in eligible), default=None)
    out.best_entity = best
    kept = 0
    for m in ordered:
        reason = None
        if _is_excluded(m, excluded):
            reason = "excluded"
            out.excluded_ids.append(m["id"])
        elif m["sim"] is None and "trank" not in m:
            reason = "no_embedding"
        elif "trank" in m:
            pass  # named in the question
        elif m["sim"] < gates.min_similarity:
            reason = "below_threshold"
        elif best is not None and m["sim"] < best * settings.relative_similarity:
            reason = "below_relative_threshold"
        if reason is None and kept >= settings.entity_top_k:
            reason = "over_top_k"
        cand = EntryCandidate(
            id=m["id"],
            title=m["title"],
            score=round(float(m["sim"]), 4) if m["sim"] is not None else 0.0,
            status="dropped" if reason else "kept",
            reason=reason,
            similarity=m["sim"],
            vector_rank=m.get("vrank"),
            fulltext_rank=m.get("frank"),
            fused=round(m["rrf"], 6),
            named=m["named"] or None,
            rule=None if reason else (m["rule"] if "trank" in m else "similarity"),
        )
        out.candidates.append(cand)
        if reason is None:
            kept += 1
            out.entities.append(cand)
    hits = [ChunkHit(h["id"], float(h["similarity"]), i) for i, h in enumerate(row.get("chunk_vector") or [], 1)]
    hits.sort(key=lambda h: (-h.similarity, h.id))
    out.chunk_hits = hits
    reports = [
        ChunkHit(h["id"], float(h["similarity"]), i, int(h.get("n_tokens") or 0))
        for i, h in enumerate(row.get("report_vector") or [], 1)
    ]
    reports.sort(key=lambda h: (-h.similarity, h.id))
    out.report_hits = reports
    out.best_chunk = hits[0].similarity if hits else None
    out.off_topic = bool(out.present.get("entity")) and not out.entities
    return out


def _is_excluded(m: dict[str, Any], excluded: set[str]) -> bool:
    return m["id"].casefold() in excluded or (m["title"] or "").casefold() in excluded
