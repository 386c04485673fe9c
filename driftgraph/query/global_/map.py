"""The map half of global search: reports packed into token-bounded batches, one key-point call per batch.

Reports are put in a seeded order (one ``random.Random(seed)``, passed in), numbered 1..n (the short ids the
points and the answer cite) and packed greedily into batches whose rendered text never exceeds the map
budget (checked with the real tokenizer). Each batch is one call of ``prompts/global_map.txt`` with a strict
json_schema; replies are parsed tolerantly and repaired once; a reply that stays malformed is counted
(``status: malformed``) and yields no points. ``MapOutcome`` says what the batches add up to: a question whose
batches were all lost has no answer, one with some lost gets a partial answer that says so. Results are kept
by batch index, so the outcome does not depend on which call finished first.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from driftgraph.errors import AnswerFailed, LLMError, OverBudget
from driftgraph.llm.chat import schema
from driftgraph.llm.structured import JsonCall, as_int, ask_json
from driftgraph.parallel import parallel_map
from driftgraph.prompts import render_prompt
from driftgraph.query.global_.gate import CallGate, failure
from driftgraph.query.global_.select import CommunityReport, ReportState

if TYPE_CHECKING:
    from driftgraph.config import GlobalConfig, PromptsConfig
    from driftgraph.runtime import Runtime

SEPARATOR = "\n\n"
_INT = re.compile(r"\d+")


@dataclass
class Point:
    """One key point from a map call; ``report_ids`` are the reports it is credited to."""

    batch: int
    index: int
    description: str
    score: int
    report_ids: list[str]
    short_ids: list[int]
    cited: bool  # False: the reply named no report of its batch, so the whole batch is credited

    @property
    def key(self) -> str:
        return f"{self.batch}.{self.index}"


@dataclass
class MapBatch:
    index: int
    reports: list[tuple[int, CommunityReport]]
    text: str
    tokens: int
    points: list[Point] = field(default_factory=list)
    calls: int = 0
    repaired: bool = False
    malformed: bool = False
    error: str | None = None
    skipped_points: int = 0
    status: str = "pending"  # done | malformed | failed (endpoint error) | skipped (no budget left)
    failure: dict[str, Any] | None = None  # failed / skipped: {reason, status, type}

    def to_dict(self) -> dict[str, Any]:
        return {
            "batch": self.index,
            "status": self.status,
            "failure": self.failure,
            "reports": [sid for sid, _ in self.reports],
            "tokens": self.tokens,
            "calls": self.calls,
            "points": len(self.points),
            "skipped_points": self.skipped_points,
            "repaired": self.repaired,
            "malformed": self.malformed,
            "error": self.error,
        }


@dataclass(frozen=True)
class MapOutcome:
    """How the map went, batch by batch: read (``done``), ``malformed`` after its repairs, ``failed`` at the
    endpoint, ``skipped`` for the budget. Lost batches (malformed or failed) are never read as "nothing
    relevant": none read is ``map_failed``, some lost is ``partial_map`` (``search.py``)."""

    batches: list[MapBatch]
    repair_retries: int = 1

    def _with(self, *status: str) -> list[MapBatch]:
        return [b for b in self.batches if b.status in status]

    @property
    def done(self) -> int:
        return len(self._with("done"))

    @property
    def lost(self) -> int:
        """Batches whose reply could not be used (malformed or failed): their reports were not read."""
        return len(self._with("malformed", "failed"))

    @property
    def unusable(self) -> bool:
        """No batch was read and some were lost: nothing to answer from, and no absence to report."""
        return self.done == 0 and self.lost > 0

    @property
    def name(self) -> str:
        """``trace.map.outcome``: complete, partial, failed, or none (nothing mapped: no report, or the budget)."""
        if self.unusable:
            return "failed"
        if self.lost:
            return "partial"
        return "complete" if self.done else "none"

    def reasons(self) -> str:
        """Why the lost batches were lost, counted, with the first error of each kind."""
        parts = []
        malformed, failed = self._with("malformed"), self._with("failed")
        if malformed:
            n = self.repair_retries
            repairs = f"{n} repair call{'s' if n != 1 else ''}"
            parts.append(f"{len(malformed)} malformed, no usable JSON after {repairs}: {malformed[0].error}")
        if failed:
            parts.append(f"{len(failed)} failed at the endpoint: {failed[0].error}")
        return "; ".join(parts)[:400]

    def summary(self) -> str:
        """One line for ``trace.notes``."""
        end = "no answer (stop_reason map_failed)" if self.unusable else "a partial answer (stop_reason partial_map)"
        return f"map: {self.lost} of {len(self.batches)} batches gave no usable reply ({self.reasons()}): {end}"

    def note(self, prompts: PromptsConfig, mapped: int) -> str:
        """A partial answer's opening lines (``prompts/partial_map_note.txt``)."""
        return render_prompt(
            "partial_map_note",
            prompts,
            lost=self.lost,
            batches=len(self.batches),
            reports=sum(len(b.reports) for b in self._with("malformed", "failed")),
            mapped=mapped,
        ).strip()

    def error(self) -> AnswerFailed:
        """No batch read: the one-line error, what failed and what to do."""
        return AnswerFailed(
            f"global search: none of the {len(self.batches)} map batches gave usable key points "
            f"({self.reasons()}): no answer was returned",
            problem="map_failed",
            hint="A small model may not keep to the JSON format: check the structured output `driftgraph doctor` "
            "reports (llm.json_schema) or try a larger model",
        )


def render_report(short_id: int, text: str) -> str:
    return f"----- Report {short_id} -----\n{text.strip()}"


def make_batches(
    reports: list[CommunityReport], states: dict[str, ReportState], budget: int, rng: random.Random, rt: Runtime
) -> list[MapBatch]:
    """Seeded order, short ids 1..n, greedy packing; every batch's exact token count is <= ``budget``."""
    from driftgraph.llm.tokenizer import truncate_tokens

    encoding = rt.config.tokenizer.encoding
    order = sorted(reports, key=lambda r: r.id)
    rng.shuffle(order)
    sep = rt.count_tokens(SEPARATOR)
    blocks: list[tuple[int, CommunityReport, str, int]] = []
    for short_id, report in enumerate(order, 1):
        block = render_report(short_id, report.text)
        tokens = rt.count_tokens(block)
        if tokens > budget:  # one report larger than a whole batch: cut it to fit, and say so
            block = truncate_tokens(block, budget, encoding)
            tokens = rt.count_tokens(block)
            states[report.id].truncated = True
        states[report.id].short_id = short_id
        states[report.id].tokens = tokens
        blocks.append((short_id, report, block, tokens))
    batches: list[list[tuple[int, CommunityReport, str, int]]] = []
    current: list[tuple[int, CommunityReport, str, int]] = []
    used = 0
    for item in blocks:
        price = item[3] + (sep if current else 0)
        if current and used + price > budget:
            batches.append(current)
            current, used = [], 0
            price = item[3]
        current.append(item)
        used += price
    if current:
        batches.append(current)
    return _exact(batches, budget, rt)


def _exact(groups: list[list[tuple[int, CommunityReport, str, int]]], budget: int, rt: Runtime) -> list[MapBatch]:
    """Re-count each packed batch as one text; move trailing reports on if the joined text runs over."""
    out: list[MapBatch] = []
    queue = list(groups)
    while queue:
        group = queue.pop(0)
        text = SEPARATOR.join(b[2] for b in group)
        tokens = rt.count_tokens(text)
        while tokens > budget and len(group) > 1:
            moved = group.pop()
            if queue:
                queue[0].insert(0, moved)
            else:
                queue.append([moved])
            text = SEPARATOR.join(b[2] for b in group)
            tokens = rt.count_tokens(text)
        out.append(MapBatch(len(out), [(b[0], b[1]) for b in group], text, tokens))
    return out


def map_prompt(rt: Runtime, settings: GlobalConfig, reports_text: str) -> str:
    return render_prompt("global_map", rt.config.prompts, reports=reports_text, max_points=settings.max_points)


POINTS_SCHEMA = schema(
    "key_points",
    {
        "points": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "description": {"type": "string"},
                    "score": {"type": "integer"},
                    "reports": {"type": "array", "items": {"type": "integer"}},
                },
                "required": ["description", "score", "reports"],
                "additionalProperties": False,
            },
        }
    },
)


def run_map(
    rt: Runtime, question: str, settings: GlobalConfig, batches: list[MapBatch], gate: CallGate | None = None
) -> None:
    """One map call per batch (``concurrency`` at a time); fills each batch's points, calls and status.

    A batch whose call fails (endpoint error after retries) or finds no budget is marked ``failed`` /
    ``skipped`` with its reason; the other batches still answer the question."""
    chat = rt.chat()

    def one(batch: MapBatch) -> Any:
        messages = [
            {"role": "system", "content": map_prompt(rt, settings, batch.text)},
            {"role": "user", "content": question},
        ]
        try:
            call = JsonCall("map", settings.map_max_tokens, POINTS_SCHEMA, _parse_points, settings.repair_retries)
            return ask_json(chat, messages, call, rt.config.prompts, gate)
        except (LLMError, OverBudget) as err:
            return err

    for batch, outcome in zip(batches, parallel_map(one, batches, settings.concurrency), strict=True):
        if isinstance(outcome, OverBudget):
            batch.status, batch.failure, batch.error = "skipped", {"reason": "budget", "status": None}, "budget"
            continue
        if isinstance(outcome, LLMError):
            batch.status, batch.failure, batch.error = "failed", failure(outcome), str(outcome)[:300]
            batch.calls = 1
            continue
        batch.calls, batch.repaired, batch.error = outcome.calls, outcome.repaired, outcome.error
        if outcome.value is None:
            batch.malformed, batch.status = True, "malformed"
            continue
        batch.status = "done"
        raw, skipped = outcome.value
        batch.skipped_points = skipped
        by_short = {sid: r.id for sid, r in batch.reports}
        for index, (description, score, cited) in enumerate(raw[: settings.max_points]):
            shorts = sorted({s for s in cited if s in by_short})
            if not shorts:
                shorts = sorted(by_short)
            named = bool(set(cited) & by_short.keys())
            ids = [by_short[s] for s in shorts]
            batch.points.append(Point(batch.index, index, description, score, ids, shorts, named))
        batch.skipped_points += max(0, len(raw) - settings.max_points)


def _parse_points(data: Any) -> tuple[list[tuple[str, int, list[int]]], int]:
    """Tolerant: ``{"points": [...]}`` or a bare list; items without text or score are skipped and counted.

    Raises ValueError (-> repair) only when nothing usable came back although items were given.
    """
    items = data.get("points") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise ValueError('expected {"points": [...]}')
    points: list[tuple[str, int, list[int]]] = []
    skipped = 0
    for item in items:
        try:
            text = str(item.get("description") or item.get("answer") or "").strip()
            if not text:
                raise ValueError("empty description")
            score = as_int(item.get("score"), 0, 100)
            cited_raw = item.get("reports") or []
            cited = [
                int(n)
                for x in (cited_raw if isinstance(cited_raw, list) else [cited_raw])
                for n in _INT.findall(str(x))
            ]
        except (AttributeError, TypeError, ValueError):
            skipped += 1
            continue
        points.append((text, score, cited))
    if items and not points:
        raise ValueError(f"none of the {len(items)} points has a description and a numeric score")
    return points, skipped
