"""Routing by question shape (docs/concepts/local-search.md): which sources come first and which get a floor.

A cheap rule decides first, from the question's wording and the entry scores; only when the rule is unsure
and ``llm_router`` is on does one small chat call (``prompts/route_question.txt``) decide. Shapes:

* ``fact`` - a specific fact: source text first (evidence), then entities, relationships, claims, reports.
* ``relational`` - how named things connect: relationships first, then entities and text.
* ``thematic`` - broad themes: community reports first.

Every shape keeps the evidence floor (``chunk_floor`` chunks when any exist) and a floor for its lead
source; what a source does not use flows to the next. The relational and thematic shapes also carry
per-source caps (``relational_caps`` / ``thematic_caps``: shares of the budget), so their lead source
cannot take the whole budget before the others have had their turn; the fact shape has none (its lead,
the source text, is the evidence).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from driftgraph.config import LocalConfig
    from driftgraph.llm.chat import ChatClient

SHAPES = ("fact", "relational", "thematic")
ORDERS: dict[str, list[str]] = {
    "fact": ["chunk", "entity", "relationship", "claim", "report"],
    "relational": ["relationship", "entity", "chunk", "claim", "report"],
    "thematic": ["report", "entity", "relationship", "chunk", "claim"],
}
_THEMATIC = re.compile(
    r"\b(themes?|overall|overview|summari[sz]e|summary|main (ideas?|topics?|points?)|trends?|in general|"
    r"broad(ly)?|across the|landscape|key (topics|issues|takeaways))\b",
    re.IGNORECASE,
)
_RELATIONAL = re.compile(
    r"\b(relationship|related|relate|between|connect(ed|ion|s)?|link(ed)?|interact(ion|s)?|compare|comparison|"
    r"versus|vs\.?|differ(ence|s)?|in common|both)\b",
    re.IGNORECASE,
)


class EntryEntity(Protocol):
    """What the rule reads of a kept entry entity (``query.trace.EntryCandidate`` is one): the trace imports the
    route's type, so the route names only the fields it needs."""

    @property
    def title(self) -> str: ...

    @property
    def similarity(self) -> float | None: ...


def thematic_wording(question: str) -> bool:
    """The question asks for themes, trends or a summary (no single named thing needed)."""
    return _THEMATIC.search(question) is not None


@dataclass(frozen=True)
class Route:
    shape: str
    order: list[str]
    floors: dict[str, int]
    reason: str
    router: str  # "config", "rule" or "llm"
    caps: dict[str, float] = field(default_factory=dict)  # source -> share of the budget (only those < 1)

    def to_dict(self) -> dict[str, Any]:
        return {
            "shape": self.shape,
            "order": self.order,
            "floors": self.floors,
            "caps": self.caps,
            "reason": self.reason,
            "router": self.router,
        }


def caps_for(shape: str, settings: LocalConfig) -> dict[str, float]:
    """The shape's per-source caps as shares of the budget; sources without a cap (1.0) are left out."""
    if shape == "fact":
        return {}
    c = settings.relational_caps if shape == "relational" else settings.thematic_caps
    shares = {
        "report": c.report,
        "entity": c.entity,
        "relationship": c.relationship,
        "chunk": c.chunk,
        "claim": c.claim,
    }
    return {k: v for k, v in shares.items() if v < 1.0}


def _make_route(shape: str, settings: LocalConfig, reason: str, router: str) -> Route:
    return Route(shape, list(ORDERS[shape]), floors_for(shape, settings), reason, router, caps_for(shape, settings))


def floors_for(shape: str, settings: LocalConfig) -> dict[str, int]:
    floors = {"chunk": settings.chunk_floor}
    if shape == "fact":
        floors["entity"] = settings.entity_floor
    elif shape == "relational":
        floors["relationship"] = settings.relationship_floor
    else:
        floors["report"] = settings.report_floor
    return {k: v for k, v in floors.items() if v > 0}


def classify(question: str, entities: Sequence[EntryEntity]) -> tuple[str, str, bool]:
    """(shape, reason, confident) from the wording and the kept entry entities."""
    strong = [e for e in entities if e.similarity is not None]
    if _THEMATIC.search(question):
        return "thematic", f"thematic wording ('{_THEMATIC.search(question).group(0)}')", True  # type: ignore[union-attr]
    if _RELATIONAL.search(question) and len(strong) >= 2:
        word = _RELATIONAL.search(question).group(0)  # type: ignore[union-attr]
        return "relational", f"relational wording ('{word}') and {len(strong)} entry entities", True
    if not strong:
        return "thematic", "no entry entity matched: a broad question, reports first", False
    return "fact", f"a specific question about {len(strong)} matched entities", len(strong) <= 5


def route(
    question: str,
    entities: Sequence[EntryEntity],
    settings: LocalConfig,
    override: str | None,
    chat: ChatClient | None,
    render_router_prompt: Any = None,
) -> Route:
    """The route: forced by ``--route``/config, else the rule, else (unsure + llm_router) the LLM."""
    wanted = override or settings.route
    if wanted in SHAPES:
        return _make_route(wanted, settings, "set by --route/config", "config")
    shape, reason, confident = classify(question, entities)
    if not confident and settings.llm_router and chat is not None and render_router_prompt is not None:
        llm_shape = ask_router(chat, render_router_prompt(question, entities))
        if llm_shape is not None:
            return _make_route(llm_shape, settings, f"LLM router (rule was unsure: {reason})", "llm")
        reason += "; LLM router gave no valid shape"
    return _make_route(shape, settings, reason, "rule")


def ask_router(chat: ChatClient, prompt: str) -> str | None:
    """One small structured call; anything but a known shape is ignored (the rule stands)."""
    from driftgraph.llm.chat import schema

    res = chat.complete(
        [{"role": "user", "content": prompt}],
        phase="route",
        max_tokens=20,
        json_schema=schema("route", {"shape": {"type": "string", "enum": list(SHAPES)}}),
    )
    match = re.search(r"\{.*\}", res.text, re.DOTALL)
    try:
        shape = json.loads(match.group(0)).get("shape") if match else res.text.strip().strip('"').lower()
    except (json.JSONDecodeError, AttributeError):
        return None
    return shape if shape in SHAPES else None
