"""What a DRIFT run is made of: steps (a tree rooted at the primer), epochs and the run's outcome."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from driftgraph.errors import LLMError

Status = Literal["done", "failed", "uncovered"]


@dataclass
class StepContext:
    """A step's local-search context: the text sent, its tokens and the node ids it included.

    ``shown`` maps a citation label (``Reports``, ``Sources`` ...) to the short ids visible in the
    context, so citations can be checked; ``items`` are ``{source, id, rank, tokens}`` rows for the trace.
    """

    text: str
    tokens: int
    shown: dict[str, set[str]] = field(default_factory=dict)
    items: list[dict[str, Any]] = field(default_factory=list)
    budget: dict[str, Any] | None = None
    id_map: dict[str, dict[str, str]] = field(default_factory=dict)  # label -> short id -> node id


@dataclass
class Step:
    """One node of the step tree. ``s0`` is the primer (the user's question); the rest are follow-ups."""

    id: str
    parent: str | None
    query: str
    depth: int
    status: Status = "uncovered"
    score: float | None = None
    answer: str | None = None
    error: str | None = None
    kind: Literal["primer", "local"] = "local"
    epoch: int | None = None
    priority: float | None = None
    novelty: float | None = None
    follow_ups: list[str] = field(default_factory=list)
    citations: dict[str, Any] | None = None
    context: StepContext | None = None
    llm_calls: int = 0
    prompt_tokens: int = 0
    repaired: bool = False
    retried: bool = False  # a degenerate reply (empty, citations only, repeated, cut) was retried once
    problems: list[str] = field(default_factory=list)  # answer_check's name for each degenerate reply

    def to_dict(self) -> dict[str, Any]:
        """The ``steps[]`` row of ``--json`` (the contract keys first)."""
        out: dict[str, Any] = {
            "id": self.id,
            "parent": self.parent,
            "query": self.query,
            "depth": self.depth,
            "score": self.score,
            "status": self.status,
            "answer": self.answer,
            "kind": self.kind,
            "epoch": self.epoch,
        }
        if self.error:
            out["error"] = self.error
        if self.priority is not None:
            out["priority"] = self.priority
            out["novelty"] = round(self.novelty or 0.0, 4)
        if self.follow_ups:
            out["follow_ups"] = list(self.follow_ups)
        if self.citations is not None:
            out["citations"] = self.citations
        if self.context is not None:
            out["context_tokens"] = self.context.tokens
            out["included"] = len(self.context.items)
        if self.llm_calls:
            out["llm_calls"] = self.llm_calls
            out["repaired"] = self.repaired
            out["retried"] = self.retried
        if self.problems:
            out["problems"] = list(self.problems)
        return out


@dataclass
class Epoch:
    depth: int
    ran: int
    best_score: float | None
    mean_score: float | None
    failed: int = 0  # steps of this epoch that failed (their scores count nowhere)
    sufficient: dict[str, Any] | None = None  # the sufficient check after this epoch (stop.Agreement.to_dict)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "depth": self.depth,
            "ran": self.ran,
            "best_score": self.best_score,
            "mean_score": self.mean_score,
            "failed": self.failed,
        }
        if self.sufficient is not None:
            out["sufficient"] = self.sufficient
        return out


@dataclass
class DriftRun:
    """Everything the loop produced; ``search.py`` turns it into the JSON envelope and the stored trace."""

    question: str
    seed: int
    steps: list[Step]
    epochs: list[Epoch]
    stop_reason: str
    limits: dict[str, Any]
    hyde: dict[str, Any] | None
    primer: dict[str, Any]
    dropped_follow_ups: list[dict[str, Any]]
    budget: dict[str, float]
    answer: str | None = None
    reduce: dict[str, Any] | None = None
    error: LLMError | None = None  # set with stop_reason "error": the endpoint refused or never answered
    stop: dict[str, Any] = field(default_factory=dict)  # the stop reason's evidence (trace ``stop``)

    @property
    def uncovered(self) -> list[Step]:
        return [s for s in self.steps if s.status == "uncovered"]

    def executed(self) -> list[Step]:
        return [s for s in self.steps if s.status != "uncovered"]
