"""Local search's fill: candidates enter item by item in the route's order within the context budget, the
rendered text is counted exactly, and every included and dropped candidate becomes a trace item.

The trace accounts for every candidate: the fill's included and dropped items, the ranking's drops (chunks below
their gate), and the report hits the entry gate kept out (they never reach the expansion). ``trace.fill`` sums
it up per source and reason, and a context that leaves most of its budget empty says why in a note."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from driftgraph.query import tables as render
from driftgraph.query.budget import Candidate, FillResult, fill
from driftgraph.query.local.entry import ChunkHit, EntryResult
from driftgraph.query.local.present import present
from driftgraph.query.local.rank import Ranked
from driftgraph.query.route import Route
from driftgraph.query.trace import SOURCES, Trace, TraceItem

if TYPE_CHECKING:
    from driftgraph.config import LocalConfig
    from driftgraph.query.local.run import LocalRun


@dataclass(frozen=True)
class Filled:
    """The rendered context, its exact token count, and what the fill included and dropped."""

    text: str
    tokens: int
    result: FillResult


def assemble(run: LocalRun, entry: EntryResult, ranked: Ranked, chosen: Route, budget: int) -> Filled:
    """Fill item by item in the route's order and render; the exact token count never exceeds ``budget``. Every
    included and dropped candidate (the ranking's drops too) becomes a trace item."""
    rec, settings, candidates = run.trace, run.settings, ranked.candidates
    count = run.rt.count_tokens
    note = _note(entry, settings, candidates)
    note_tokens = count(note) if note else 0
    if note_tokens > budget:
        note, note_tokens = "", 0  # a budget too small even for the note stays empty
    headers = {s: count(render.header(s)) for s in SOURCES}
    room = max(0, budget - note_tokens)
    caps = {s: int(share * room) for s, share in chosen.caps.items()}
    result = fill(candidates, chosen.order, chosen.floors, room, headers, caps)
    if settings.chunk_rank != "score":  # the presentation order (present.py): same chunks, another order
        shown = present(result.included, settings)
        for i, (old, new) in enumerate(zip(result.included, shown, strict=True)):
            if new is not old:
                new.tokens = count(new.payload["row"])
                result.included[i] = new
    short = [c for c in result.included if c.form]
    if short:
        rec.notes.append(f"{len(short)} report(s) entered as their summary: the full text did not fit what was left")
    text = note + render.render(result.included, chosen.order)
    tokens = count(text)
    while tokens > budget and result.included:  # safety net; the parts add up exactly in practice
        last = result.included.pop()
        result.dropped.append((last, "exact_check"))
        text = note + render.render(result.included, chosen.order)
        tokens = count(text)
    if note:
        rec.notes.append(note.strip())
    gated = [_gated_report(hit, reason) for hit, reason in entry.gated_reports]
    dropped = [*ranked.dropped, *gated, *result.dropped]
    record_items(rec, result.included, dropped)
    rec.extra["fill"] = account(rec, result.included, dropped, tokens, budget)
    return Filled(text, tokens, result)


EMPTY_SHARE = 0.5  # a context using less than this share of its budget says why


def account(
    rec: Trace, included: list[Candidate], dropped: list[tuple[Candidate, str]], tokens: int, budget: int
) -> dict[str, Any]:
    """Every candidate counted once: per source, included and dropped by reason, and the entry verdicts of
    entities that never became candidates. A context under ``EMPTY_SHARE`` of its budget gets a note saying
    what was dropped and why (or that nothing else was found)."""
    by_source: dict[str, dict[str, Any]] = {}
    for c in included:
        by_source.setdefault(c.source, {"included": 0, "dropped": {}})["included"] += 1
    for c, reason in dropped:
        drops = by_source.setdefault(c.source, {"included": 0, "dropped": {}})["dropped"]
        drops[reason] = drops.get(reason, 0) + 1
    entry_drops: dict[str, int] = {}
    for e in rec.entry:
        if e.kind == "entity" and e.status == "dropped":
            entry_drops[e.reason or "dropped"] = entry_drops.get(e.reason or "dropped", 0) + 1
    out: dict[str, Any] = {
        "budget": budget,
        "tokens": tokens,
        "candidates": len(included) + len(dropped),
        "sources": {s: by_source[s] for s in SOURCES if s in by_source},
        "entry_entities_dropped": entry_drops,
    }
    if budget > 0 and tokens < EMPTY_SHARE * budget:
        parts = [
            f"{n} {source}(s) {reason}"
            for source in SOURCES
            for reason, n in sorted(by_source.get(source, {}).get("dropped", {}).items())
        ]
        parts += [f"{n} entry entit{'y' if n == 1 else 'ies'} {reason}" for reason, n in sorted(entry_drops.items())]
        why = "; ".join(parts) if parts else "no other candidate was found"
        out["mostly_empty"] = True
        rec.notes.append(f"context uses {tokens} of {budget} tokens: {why} (every one is a trace item)")
    return out


def _gated_report(hit: ChunkHit, reason: str) -> tuple[Candidate, str]:
    """A report hit the entry gate kept out, as a dropped candidate (it never reached the expansion)."""
    payload = {"similarity": hit.similarity}
    return Candidate("report", hit.id, hit.tokens, hit.similarity, rank=0, hop="vector", payload=payload), reason


def record_items(rec: Trace, included: list[Candidate], dropped: list[tuple[Candidate, str]]) -> None:
    for c in included:
        rec.add_item(_item(c, None))
    for c, reason in dropped:
        rec.add_item(_item(c, reason))


def _item(c: Candidate, dropped_for: str | None) -> TraceItem:
    """A candidate as a trace item: included (``dropped_for`` None, with the shorter form it entered as, if
    any) or dropped with its reason."""
    p = c.payload or {}
    included = dropped_for is None
    return TraceItem(
        c.source,
        c.id,
        c.tokens,
        "included" if included else "dropped",
        dropped_for,
        c.rank if included else (c.rank or None),
        c.hop,
        round(c.score, 4),
        p.get("via"),
        depth=p.get("depth"),
        rerank_score=p.get("rerank_score"),
        form=c.form if included else None,
        why=c.why if included else None,
        location=p.get("location"),
    )


def _note(entry: EntryResult, settings: LocalConfig, candidates: dict[str, list[Candidate]]) -> str:
    """What the context says when the index has nothing close to the question (instead of padding)."""
    if any(candidates.values()) and not entry.off_topic:
        return ""
    best_e = f"{entry.best_entity:.2f}" if entry.best_entity is not None else "none"
    best_c = f"{entry.best_chunk:.2f}" if entry.best_chunk is not None else "none"
    gates = entry.gates(settings)
    return (
        f"-----Note-----\nNo entity in the index is similar enough to the question (best entity similarity {best_e},"
        f" threshold {gates.min_similarity:g} ({gates.source}); best text unit {best_c}). The tables below hold only"
        " what passed the threshold, if anything.\n"
    )
