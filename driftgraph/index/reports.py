"""Community reports, bottom-up: deepest level first, so a parent can use its children's reports.

A community's context is its entities, relationships and claims as tables, most connected first. When that
does not fit ``index.report_max_input_tokens``, reports of its largest sub-communities replace their raw
rows one by one until it fits (then the rest is cut in priority order). A stored report is reused when
its community's id (level + members) and its *report basis* (a hash of the entity, relationship and claim
rows its context is built from) are unchanged: a community whose members gained a description or a
degree gets a fresh report even when its membership held. A report stored without a basis (written
before bases were kept) is reused on its id alone, as it was then.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from driftgraph.config import Config
from driftgraph.errors import CallFailed
from driftgraph.index.ask import Ask, ask_json
from driftgraph.index.communities import Community
from driftgraph.index.merge import Claim, Graph
from driftgraph.index.parse import parse_report
from driftgraph.llm.chat import ChatClient, schema
from driftgraph.llm.tokenizer import count_tokens
from driftgraph.parallel import parallel_map
from driftgraph.prompts import render_prompt

_S = {"type": "string"}
REPORT_SCHEMA = schema(
    "community_report",
    {
        "title": _S,
        "summary": _S,
        "rating": {"type": "number"},
        "rating_explanation": _S,
        "findings": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"summary": _S, "explanation": _S},
                "required": ["summary", "explanation"],
                "additionalProperties": False,
            },
        },
    },
)


@dataclass
class Report:
    community_id: str
    title: str
    summary: str
    rating: float
    rating_explanation: str
    findings: list[dict[str, str]] = field(default_factory=list)
    full_content: str = ""
    reused: bool = False
    basis: str | None = None


def full_content(title: str, summary: str, findings: Sequence[dict[str, str]]) -> str:
    """The report as markdown: what gets embedded and what query modes put in a context."""
    parts = [f"# {title}", summary]
    for f in findings:
        parts += [f"## {f.get('summary', '')}", f.get("explanation", "")]
    return "\n\n".join(p for p in parts if p)


def _table(title: str, header: list[str], rows: list[list[Any]], enc: str, budget: int) -> tuple[str, int, int]:
    """CSV table rows in order until ``budget`` tokens; returns (text, tokens, rows kept)."""
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(header)
    head = f"-----{title}-----\n{buf.getvalue()}"
    used = count_tokens(head, enc)
    if used > budget or not rows:
        return "", 0, 0
    lines = [head]
    kept = 0
    for row in rows:
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\n").writerow(row)
        cost = count_tokens(buf.getvalue(), enc)
        if used + cost > budget:
            break
        lines.append(buf.getvalue())
        used += cost
        kept += 1
    return "".join(lines), used, kept


class ContextBuilder:
    """Tables of one community's raw data (optionally minus entities covered by sub-reports)."""

    def __init__(self, graph: Graph, cfg: Config) -> None:
        self.enc = cfg.tokenizer.encoding
        self.budget = cfg.index.report_max_input_tokens
        self.entities = {e.id: e for e in graph.entities}
        self.short = {e.id: i for i, e in enumerate(graph.entities)}
        self.rels = {r.id: r for r in graph.relationships}
        self.rel_short = {r.id: i for i, r in enumerate(graph.relationships)}
        self.claims_by_entity: dict[str, list[Claim]] = {}
        for c in graph.claims:
            if c.subject_id:
                self.claims_by_entity.setdefault(c.subject_id, []).append(c)
        self.claim_short = {c.id: i for i, c in enumerate(graph.claims)}

    def raw(self, entity_ids: Sequence[str], rel_ids: Sequence[str], budget: int) -> tuple[str, int, bool]:
        """(tables, tokens, complete?) with the most connected entities and relationships first."""
        ents = sorted((self.entities[i] for i in entity_ids), key=lambda e: (-e.degree, e.id))
        rels = sorted((self.rels[i] for i in rel_ids), key=lambda r: (-r.combined_degree, r.id))
        claims = [c for e in ents for c in self.claims_by_entity.get(e.id, [])]
        parts, used, complete = [], 0, True
        tables = [
            ("Entities", ["id", "entity", "type", "description", "degree"],
             [[self.short[e.id], e.title, e.type, e.description, e.degree] for e in ents]),
            ("Relationships", ["id", "source", "target", "description", "combined_degree"],
             [[self.rel_short[r.id], r.source, r.target, r.description, r.combined_degree] for r in rels]),
            ("Claims", ["id", "entity", "type", "status", "description"],
             [[self.claim_short[c.id], c.subject, c.type, c.status, c.description] for c in claims]),
        ]  # fmt: skip
        for title, header, rows in tables:
            if not rows:
                continue
            text, tokens, kept = _table(title, header, rows, self.enc, budget - used)
            complete = complete and kept == len(rows)
            if text:
                parts.append(text)
                used += tokens
        return "\n".join(parts), used, complete

    def basis(self, c: Community) -> str:
        """Hash of the rows a report of ``c`` reads (stable ids, not the per-run row numbers)."""
        ents = sorted(c.entity_ids)
        rows = [
            [[e.id, e.title, e.type, e.description, e.degree] for e in (self.entities[i] for i in ents)],
            [[r.id, r.source, r.target, r.description, r.combined_degree]
             for r in (self.rels[i] for i in sorted(c.relationship_ids))],
            [[cl.id, cl.subject, cl.type, cl.status, cl.description]
             for e in ents for cl in self.claims_by_entity.get(e, [])],
        ]  # fmt: skip
        return hashlib.sha256(json.dumps(rows, ensure_ascii=False).encode()).hexdigest()[:32]

    def context(self, c: Community, children: Sequence[Community], reports: dict[str, Report]) -> tuple[str, bool]:
        """(context, substituted?) for ``c``; sub-reports replace raw rows only when raw data does not fit."""
        text, _, complete = self.raw(c.entity_ids, c.relationship_ids, self.budget)
        subs = [s for s in sorted(children, key=lambda s: (-s.size, s.community)) if s.id in reports]
        if complete or not subs:
            return text, False
        for k in range(1, len(subs) + 1):
            chosen = subs[:k]
            covered = {e for s in chosen for e in s.entity_ids}
            sub_text = self._reports(chosen, reports)
            used = count_tokens(sub_text, self.enc)
            rest_e = [e for e in c.entity_ids if e not in covered]
            rest_r = [r for r in c.relationship_ids if not {self.rels[r].source_id, self.rels[r].target_id} <= covered]
            raw, _, complete = self.raw(rest_e, rest_r, self.budget - used)
            if used <= self.budget and (complete or k == len(subs)):
                return "\n".join(p for p in (sub_text, raw) if p), True
        return self._reports(subs, reports), True  # pragma: no cover - loop always returns

    def _reports(self, subs: Sequence[Community], reports: dict[str, Report]) -> str:
        rows = [[s.community, reports[s.id].full_content] for s in subs]
        text, _, _ = _table("Reports", ["id", "report"], rows, self.enc, self.budget)
        return text


def generate_reports(
    graph: Graph,
    communities: Sequence[Community],
    chat: ChatClient,
    cfg: Config,
    existing: dict[str, Report],
    on_done: Callable[[], None] | None = None,
) -> tuple[dict[str, Report], dict[str, Any]]:
    """Reports by community id, plus stats (generated, reused, outdated: generated again for a kept
    community whose data changed, substituted, skipped_small: below ``index.report_min_size`` and never
    reported, failures)."""
    builder = ContextBuilder(graph, cfg)
    by_number = {c.community: c for c in communities}
    reports: dict[str, Report] = {}
    stats: dict[str, Any] = {
        "generated": 0,
        "reused": 0,
        "outdated": 0,
        "substituted": 0,
        "skipped_small": 0,
        "failures": [],
    }
    lock = threading.Lock()

    def count(key: str, n: int = 1) -> None:
        with lock:
            stats[key] += n

    def one(c: Community) -> Report | None:
        basis = builder.basis(c)
        old = existing.get(c.id)
        if old is not None and old.basis in (None, basis):
            count("reused")
            return replace(old, basis=basis)
        if old is None and c.size < cfg.index.report_min_size:  # a stored report is kept current, not dropped
            count("skipped_small")
            return None
        count("outdated", int(old is not None))
        children = [by_number[n] for n in c.children if n in by_number]
        context, substituted = builder.context(c, children, reports)
        prompt = render_prompt("community_report", cfg.prompts, input_text=context)
        try:
            ask = Ask("report", cfg.index.report_max_tokens, REPORT_SCHEMA, cfg.index.loop_guard)
            rec = ask_json(chat, [{"role": "user", "content": prompt}], parse_report, ask, cfg.prompts).value
        except CallFailed as err:
            stats["failures"].append({"community": c.community, "level": c.level, "error": str(err)})
            return None
        count("generated")
        count("substituted", int(substituted))
        findings = [f.model_dump() for f in rec.findings]
        return Report(
            c.id,
            rec.title,
            rec.summary,
            rec.rating,
            rec.rating_explanation,
            findings,
            full_content(rec.title, rec.summary, findings),
            basis=basis,
        )

    for level in sorted({c.level for c in communities}, reverse=True):
        batch = [c for c in communities if c.level == level]
        for c, rep in zip(batch, parallel_map(one, batch, cfg.index.concurrency, on_done), strict=True):
            if rep is not None:
                reports[c.id] = rep
    return reports, stats
