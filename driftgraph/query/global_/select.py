"""Which community reports global search reads: a fixed hierarchy cut, or a rated descent from the roots.

A full level reads every report of the cut (``cypher/query/global_level_reports``). ``dynamic`` starts at the
root communities, rates their summaries in batches with a cheap call (``prompts/global_rate.txt``) and goes
down only into the children of reports rated at least ``rate_threshold``; a subtree under a low rating is
never read. A relevant report whose children were all rated low is read itself, so a relevant branch is not
lost because its sub-communities were each too narrow. Every report visited gets a ``ReportState`` that the
trace prints: rated (with its rating), selected, or dropped and why.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from driftgraph.errors import AnswerFailed, LLMError, NoReportsError, OverBudget
from driftgraph.llm.chat import schema
from driftgraph.llm.structured import JsonCall, as_int, ask_json
from driftgraph.parallel import parallel_map
from driftgraph.prompts import render_prompt
from driftgraph.query.global_.gate import CallGate

if TYPE_CHECKING:
    from driftgraph.config import GlobalConfig
    from driftgraph.runtime import Runtime


@dataclass(frozen=True)
class CommunityReport:
    """One community report as global search sees it (``text`` is its full_content)."""

    id: str
    community: int | None
    level: int
    title: str
    rank: float | None
    summary: str
    text: str
    n_tokens: int | None
    children: int = 0
    descendants: int = 0
    parent: str | None = None

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> CommunityReport:
        return cls(
            id=str(row["id"]),
            community=row.get("community"),
            level=int(row.get("level") or 0),
            title=str(row.get("title") or ""),
            rank=row.get("rank"),
            summary=str(row.get("summary") or ""),
            text=str(row.get("full_content") or ""),
            n_tokens=row.get("n_tokens"),
            children=int(row.get("children") or 0),
            descendants=int(row.get("descendants") or 0),
            parent=row.get("parent"),
        )


@dataclass
class ReportState:
    """What happened to one report: the furthest stage it reached, and the verdict with its reason."""

    report: CommunityReport
    stage: str = "listed"  # listed -> rated -> mapped -> used
    status: str | None = None  # "included" | "dropped", set once the run ends
    reason: str | None = None
    rating: int | None = None
    rate_call: int | None = None
    batch: int | None = None
    short_id: int | None = None
    tokens: int = 0
    truncated: bool = False
    points: int = 0
    used_points: int = 0
    note: str | None = None

    def drop(self, reason: str) -> None:
        self.status, self.reason = "dropped", reason

    def to_dict(self) -> dict[str, Any]:
        r = self.report
        out: dict[str, Any] = {
            "id": r.id,
            "community": r.community,
            "level": r.level,
            "title": r.title,
            "stage": self.stage,
            "status": self.status,
            "reason": self.reason,
            "rating": self.rating,
            "batch": self.batch,
            "short_id": self.short_id,
            "tokens": self.tokens,
            "points": self.points,
            "used_points": self.used_points,
        }
        if self.truncated:
            out["truncated"] = True
        if self.note:
            out["note"] = self.note
        if self.rate_call is not None:
            out["rate_batch"] = self.rate_call
        if self.reason == "low_rating" and r.descendants:
            out["pruned_descendants"] = r.descendants
        return out


@dataclass
class Selection:
    """The reports to map (in id order) and the state of every report visited."""

    selected: list[CommunityReport]
    states: dict[str, ReportState]
    mode: str
    level: int
    rate_calls: int = 0
    rate_batches: int = 0
    rate_malformed: int = 0
    rate_repaired: int = 0
    rate_failed: int = 0
    rounds: list[dict[str, Any]] = field(default_factory=list)

    @property
    def ratings_unusable(self) -> bool:
        """Nothing selected because no rating reply could be used (every rating batch malformed or failed):
        the reports were never judged, so "nothing relevant" would be a failure read as an absence."""
        lost = self.rate_malformed + self.rate_failed
        return not self.selected and self.rate_batches > 0 and lost >= self.rate_batches

    def rating_error(self) -> AnswerFailed:
        """``ratings_unusable``: the one-line error (``stop_reason: rate_failed``)."""
        return AnswerFailed(
            f"global search: none of the {self.rate_batches} rating batches of the dynamic selection gave usable "
            f"ratings ({self.rate_malformed} malformed, {self.rate_failed} failed at the endpoint), so no report "
            "was read: no answer was returned",
            problem="rate_failed",
            hint="A small model may not keep to the JSON format: try --no-dynamic (a level cut, no ratings), check "
            "the structured output `driftgraph doctor` reports, or try a larger model",
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "level": self.level,
            "selected": len(self.selected),
            "visited": len(self.states),
            "rate_calls": self.rate_calls,
            "rate_batches": self.rate_batches,
            "rate_malformed": self.rate_malformed,
            "rate_repaired": self.rate_repaired,
            "rate_failed": self.rate_failed,
            "rounds": self.rounds,
        }


def select_level(rt: Runtime, level: int) -> Selection:
    """Every report of the hierarchy cut at ``level``; communities without a report are listed and dropped."""
    rows = rt.store.read("query/global_level_reports", level=level)
    if not rows:
        _no_reports(rt, level)
    states: dict[str, ReportState] = {}
    selected: list[CommunityReport] = []
    for row in rows:
        report = CommunityReport.from_row(row)
        state = states[report.id] = ReportState(report)
        if report.text.strip():
            selected.append(report)
        else:
            state.drop("no_report")
    return Selection(selected, states, "level", level)


def _no_reports(rt: Runtime, level: int) -> None:
    levels = rt.store.read("query/community_levels")
    if not any(r["reports"] for r in levels):
        raise NoReportsError(
            "the database has no community reports: import a GraphRAG index (driftgraph import-graphrag) "
            "or build one (driftgraph index) first"
        )
    known = ", ".join(f"{r['level']} ({r['reports']} reports)" for r in levels)
    raise NoReportsError(f"no community reports at level {level} (levels: {known})")


def select_dynamic(
    rt: Runtime, question: str, settings: GlobalConfig, max_level: int, gate: CallGate | None = None
) -> Selection:
    """Rate from the roots down to ``max_level``; descend only under reports rated >= ``rate_threshold``.

    A report without a rating (the reply stayed malformed, the call failed, no budget left) is not taken as
    relevant: it is dropped with ``rating_malformed``, ``rating_failed`` or ``budget``."""
    frontier = [CommunityReport.from_row(r) for r in rt.store.read("query/global_roots")]
    if not frontier:
        _no_reports(rt, 0)
    sel = Selection([], {}, "dynamic", max_level)
    kept_children: dict[str, int] = {}
    descended: list[CommunityReport] = []
    depth = 0
    while frontier:
        for report in frontier:
            sel.states[report.id] = ReportState(report)
        readable = [r for r in frontier if r.text.strip() or r.summary.strip()]
        for r in frontier:
            if not (r.text.strip() or r.summary.strip()):
                sel.states[r.id].drop("no_report")
        ratings, unrated = _rate(rt, question, settings, readable, sel, gate)
        next_parents: list[CommunityReport] = []
        for report in readable:
            state = sel.states[report.id]
            rating = ratings.get(report.id)
            state.stage, state.rating = "rated", rating
            if rating is None:
                state.drop(unrated.get(report.id, "rating_malformed"))
                continue
            if rating < settings.rate_threshold:
                state.drop("low_rating")
                continue
            if report.parent is not None:
                kept_children[report.parent] = kept_children.get(report.parent, 0) + 1
            if report.children and report.level < max_level:
                next_parents.append(report)
            elif report.text.strip():
                sel.selected.append(report)
            else:
                state.drop("no_report")
        dropped = sum(1 for r in readable if sel.states[r.id].status == "dropped")
        sel.rounds.append({"depth": depth, "rated": len(readable), "kept": len(readable) - dropped})
        descended += next_parents
        frontier = _children(rt, [r.id for r in next_parents])
        depth += 1
    for parent in descended:
        state = sel.states[parent.id]
        if kept_children.get(parent.id, 0) == 0 and parent.text.strip():
            sel.selected.append(parent)  # relevant, but every child was rated low: read the parent itself
            state.note = "children_rated_low"
        else:
            state.drop("descended")
    sel.selected.sort(key=lambda r: r.id)
    return sel


def _children(rt: Runtime, parent_ids: list[str]) -> list[CommunityReport]:
    if not parent_ids:
        return []
    return [CommunityReport.from_row(r) for r in rt.store.read("query/global_children", ids=parent_ids)]


def _rate(
    rt: Runtime,
    question: str,
    settings: GlobalConfig,
    reports: list[CommunityReport],
    sel: Selection,
    gate: CallGate | None = None,
) -> tuple[dict[str, int | None], dict[str, str]]:
    """Ratings by report id (None: unrated) and why each unrated one has none (malformed, failed, budget)."""
    from driftgraph.llm.tokenizer import truncate_tokens

    size = settings.rate_batch_size
    batches = [reports[i : i + size] for i in range(0, len(reports), size)]
    encoding = rt.config.tokenizer.encoding
    chat = rt.chat()
    response = schema(
        "report_ratings",
        {
            "ratings": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"report": {"type": "integer"}, "rating": {"type": "integer"}},
                    "required": ["report", "rating"],
                    "additionalProperties": False,
                },
            }
        },
    )

    def rate_batch(batch: list[CommunityReport]) -> Any:
        blocks = []
        for n, report in enumerate(batch, 1):
            text = report.summary.strip() or report.text
            blocks.append(f"Report {n}: {report.title}\n{truncate_tokens(text, settings.rate_text_tokens, encoding)}")
        prompt = render_prompt(
            "global_rate",
            rt.config.prompts,
            question=question,
            reports="\n\n".join(blocks),
            max_rating=settings.max_rating,
        )
        try:
            validate = _ratings_validator(len(batch), settings.max_rating)
            call = JsonCall("rate", 32 + 16 * len(batch), response, validate, settings.repair_retries)
            return ask_json(chat, [{"role": "user", "content": prompt}], call, rt.config.prompts, gate)
        except (LLMError, OverBudget) as err:
            return err

    out: dict[str, int | None] = {}
    unrated: dict[str, str] = {}
    for batch, outcome in zip(batches, parallel_map(rate_batch, batches, settings.concurrency), strict=True):
        if isinstance(outcome, LLMError | OverBudget):
            reason = "budget" if isinstance(outcome, OverBudget) else "rating_failed"
            sel.rate_failed += int(isinstance(outcome, LLMError))
            sel.rate_calls += int(isinstance(outcome, LLMError))
            for report in batch:
                sel.states[report.id].rate_call = sel.rate_batches
                out[report.id], unrated[report.id] = None, reason
            sel.rate_batches += 1
            continue
        sel.rate_calls += outcome.calls
        sel.rate_repaired += int(outcome.repaired)
        sel.rate_malformed += int(outcome.malformed)
        for n, report in enumerate(batch, 1):
            sel.states[report.id].rate_call = sel.rate_batches
            out[report.id] = None if outcome.value is None else outcome.value[n]
            if outcome.value is None:
                unrated[report.id] = "rating_malformed"
        sel.rate_batches += 1
    return out, unrated


def _ratings_validator(count: int, max_rating: int) -> Callable[[Any], dict[int, int]]:
    def validate(data: Any) -> dict[int, int]:
        items = data.get("ratings") if isinstance(data, dict) else data
        if not isinstance(items, list):
            raise ValueError('expected {"ratings": [...]}')
        got: dict[int, int] = {}
        for item in items:
            if isinstance(item, dict) and "report" in item and "rating" in item:
                n = as_int(item["report"], -1, 10**6)
                if 1 <= n <= count:
                    got[n] = as_int(item["rating"], 0, max_rating)
        missing = [n for n in range(1, count + 1) if n not in got]
        if missing:
            raise ValueError(f"no rating for report(s) {missing}")
        return got

    return validate
