"""One frozen request per query mode: the value a call is, to log, store, replay, diff and serve over HTTP.

``LocalQuery``, ``DriftQuery``, ``GlobalQuery`` and ``BasicQuery`` are pydantic models validated once, here:
a bad field raises ``RequestError`` naming it. Each field's description is what ``--help``, the docs'
request tables and the HTTP schema print. Per-call overrides of the config are resolved one way,
``request.settings(config)``: the mode's config section with the request's non-None overrides applied and
validated. The stored trace keeps ``request.model_dump()``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import timedelta
from typing import Any, ClassVar, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from driftgraph.config import BasicConfig, Config, DriftConfig, GlobalConfig, LocalConfig
from driftgraph.errors import QuestionError, RequestError

Route = Literal["auto", "fact", "relational", "thematic"]


def check_question(question: str) -> str:
    """A question must have text; surrounding whitespace is dropped (the one check every mode shares)."""
    if not isinstance(question, str) or not question.strip():
        raise QuestionError("the question is empty")
    return question.strip()


def _request_error(model: str, err: ValidationError) -> RequestError:
    first = err.errors()[0]
    field = ".".join(str(p) for p in first["loc"]) or None
    message = str(first["msg"]).removeprefix("Value error, ")
    if first["type"] == "extra_forbidden":
        message = "unknown field"
    if field == "question":
        return QuestionError(message)
    return RequestError(f"{model}: bad '{field}': {message}" if field else f"{model}: {message}", field)


class Turn(BaseModel):
    """One earlier message of the conversation."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: Literal["user", "assistant", "system"] = Field(description="Who said it.")
    content: str = Field(description="What was said.")


class QueryRequest(BaseModel):
    """Fields every mode shares; subclasses add theirs and name the config section they override."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    mode: ClassVar[str] = ""
    section: ClassVar[str] = ""
    overrides: ClassVar[tuple[str, ...]] = ()

    question: str = Field(description="The question.")
    store_trace: bool = Field(True, description="Store the retrieval trace in Neo4j (also needs trace.enabled).")
    timeout_s: float | None = Field(
        None,
        gt=0,
        description="Stop the question after this many seconds (stop_reason deadline, stored with the cost so "
        "far); a server's serve.request_timeout_s still applies when it is shorter.",
    )

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as err:
            raise _request_error(type(self).__name__, err) from None

    @classmethod
    def parse(cls, data: Mapping[str, Any]) -> Self:
        """A request from a mapping (an HTTP body, a stored trace's ``request``)."""
        return cls(**dict(data))

    @field_validator("question")
    @classmethod
    def _question(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the question is empty")
        return value.strip()

    def settings(self, config: Config) -> Any:
        """The mode's config section with this request's non-None overrides applied and validated."""
        base: BaseModel = getattr(config, self.section)
        updates = {k: getattr(self, k) for k in self.overrides if getattr(self, k) is not None}
        if not updates:
            return base
        try:
            return type(base).model_validate({**base.model_dump(), **updates})
        except ValidationError as err:
            raise _request_error(type(self).__name__, err) from None


class LocalQuery(QueryRequest):
    """Local search: entry entities and chunks, one expansion query, a budgeted context, a cited answer."""

    mode: ClassVar[str] = "local"
    section: ClassVar[str] = "local"
    overrides: ClassVar[tuple[str, ...]] = ("route",)

    context_only: bool = Field(False, description="Assemble the context; no answer call.")
    budget: int | None = Field(None, ge=1, description="Fix the context budget in tokens (else derived).")
    history: tuple[Turn, ...] = Field((), description="Earlier turns, oldest first: a list of {role, content}.")
    exclude: tuple[str, ...] = Field((), description="Entity titles or ids never to use.")
    route: Route | None = Field(None, description="auto | fact | relational | thematic (default: local.route).")

    def settings(self, config: Config) -> LocalConfig:
        out: LocalConfig = super().settings(config)
        return out


class DriftQuery(QueryRequest):
    """DRIFT: a primer over community reports, then epochs of local searches on de-duplicated follow-ups."""

    mode: ClassVar[str] = "drift"
    section: ClassVar[str] = "drift"
    overrides: ClassVar[tuple[str, ...]] = ("seed", "reduce", "max_llm_calls", "max_prompt_tokens", "max_depth")

    seed: int | None = Field(None, ge=0, description="Seed of every random choice (default: drift.seed).")
    reduce: bool | None = Field(None, description="Write one final answer; false returns the step tree.")
    max_llm_calls: int | None = Field(None, ge=1, description="Chat-call budget (default: drift.max_llm_calls).")
    max_prompt_tokens: int | None = Field(
        None, ge=1, description="Prompt-token budget, never exceeded (default: drift.max_prompt_tokens)."
    )
    max_depth: int | None = Field(None, ge=0, description="Epochs after the primer (default: drift.max_depth).")
    history: tuple[Turn, ...] = Field(
        (), description="Earlier turns, oldest first: a follow-up question is rewritten into a standalone one."
    )

    def settings(self, config: Config) -> DriftConfig:
        out: DriftConfig = super().settings(config)
        return out


class GlobalQuery(QueryRequest):
    """Global search: map the community reports in token-bounded batches, reduce the best key points."""

    mode: ClassVar[str] = "global"
    section: ClassVar[str] = "global_"
    overrides: ClassVar[tuple[str, ...]] = ("level", "dynamic", "seed", "max_llm_calls", "max_prompt_tokens")

    level: int | None = Field(None, ge=0, description="Community level to read (default: global.level).")
    dynamic: bool | None = Field(
        None, description="Descend from the roots only into reports rated relevant (default: global.dynamic)."
    )
    budget: int | None = Field(None, ge=1, description="Fix the map and reduce budgets in tokens (else derived).")
    seed: int | None = Field(None, ge=0, description="Report order seed (default: global.seed).")
    max_llm_calls: int | None = Field(
        None, ge=1, description="Chat-call budget: rating, map and reduce (default: global.max_llm_calls)."
    )
    max_prompt_tokens: int | None = Field(
        None, ge=1, description="Prompt-token budget, never exceeded (default: global.max_prompt_tokens)."
    )
    history: tuple[Turn, ...] = Field(
        (), description="Earlier turns, oldest first: a follow-up question is rewritten into a standalone one."
    )

    def settings(self, config: Config) -> GlobalConfig:
        out: GlobalConfig = super().settings(config)
        return out


class BasicQuery(QueryRequest):
    """Basic search: the nearest chunks until the budget is full, one answer (the baseline to compare)."""

    mode: ClassVar[str] = "basic"
    section: ClassVar[str] = "basic"

    context_only: bool = Field(False, description="Assemble the context; no answer call.")
    budget: int | None = Field(None, ge=1, description="Fix the context budget in tokens (else derived).")

    def settings(self, config: Config) -> BasicConfig:
        out: BasicConfig = super().settings(config)
        return out


REQUESTS: dict[str, type[QueryRequest]] = {r.mode: r for r in (LocalQuery, DriftQuery, GlobalQuery, BasicQuery)}


_DURATION = re.compile(r"^\s*(\d+)\s*([smhdw])\s*$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_age(text: str) -> timedelta:
    """``30d``, ``12h``, ``90m``, ``2w``, ``45s`` -> timedelta (``trace prune --older-than``); anything else is a
    one-line error."""
    m = _DURATION.match(text)
    if not m:
        raise RequestError(f"--older-than '{text}': use a number and a unit s, m, h, d or w (e.g. 30d)", "older_than")
    return timedelta(**{_UNITS[m.group(2)]: int(m.group(1))})
