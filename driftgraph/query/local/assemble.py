"""Local search's fill: candidates enter item by item in the route's order within the context budget, the
rendered text is counted exactly, and every included and dropped candidate becomes a trace item."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from driftgraph.query import tables as render
from driftgraph.query.budget import Candidate, FillResult, fill
from driftgraph.query.local.entry import EntryResult
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
    record_items(rec, result.included, [*ranked.dropped, *result.dropped])
    return Filled(text, tokens, result)


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
    )


def _note(entry: Any, settings: LocalConfig, candidates: dict[str, list[Candidate]]) -> str:
    """What the context says when the index has nothing close to the question (instead of padding)."""
    if any(candidates.values()) and not entry.off_topic:
        return ""
    best_e = f"{entry.best_entity:.2f}" if entry.best_entity is not None else "none"
    best_c = f"{entry.best_chunk:.2f}" if entry.best_chunk is not None else "none"
    return (
        f"-----Note-----\nNo entity in the index is similar enough to the question (best entity similarity {best_e},"
        f" threshold {settings.min_similarity:g}; best text unit {best_c}). The tables below hold only what passed"
        " the threshold, if anything.\n"
    )
