"""Tolerant reading of an LLM's JSON answer, validated record by record with pydantic.

Models wrap JSON in code fences, add a sentence before it, or get one record wrong. We take the outermost
JSON object, validate each record on its own and drop (and count) only the records that are invalid, so
one bad record does not cost the other twenty. Only an answer with no usable object at all is an error,
which the caller answers with one repair request.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from driftgraph.errors import ReplyFormatError
from driftgraph.llm.jsonreply import extract_json_object

M = TypeVar("M", bound=BaseModel)


class _Record(BaseModel):
    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True)

    @field_validator("*", mode="before")
    @classmethod
    def _none_to_default(cls, v: Any) -> Any:
        return "" if v is None else v


class EntityRecord(_Record):
    title: str = Field(min_length=1)
    type: str = ""
    description: str = ""


class RelationshipRecord(_Record):
    source: str = Field(min_length=1)
    target: str = Field(min_length=1)
    description: str = ""
    strength: float = Field(1.0, ge=0)

    @field_validator("strength", mode="before")
    @classmethod
    def _strength(cls, v: Any) -> Any:
        return 1.0 if v in ("", None) else v


class ClaimRecord(_Record):
    subject: str = Field(min_length=1)
    object: str = "NONE"
    type: str = ""
    status: str = ""
    start_date: str = "NONE"
    end_date: str = "NONE"
    description: str = ""
    source_text: str = ""


class Finding(_Record):
    summary: str = ""
    explanation: str = ""


class ReportRecord(_Record):
    title: str = Field(min_length=1)
    summary: str = ""
    rating: float = Field(0.0, ge=0, le=10)
    rating_explanation: str = ""
    findings: list[Finding] = Field(default_factory=list)

    @field_validator("findings", mode="before")
    @classmethod
    def _findings(cls, v: Any) -> Any:
        if not isinstance(v, list):
            return []
        return [f if isinstance(f, dict) else {"summary": str(f)} for f in v]

    @field_validator("rating", mode="before")
    @classmethod
    def _rating(cls, v: Any) -> Any:
        try:
            return min(10.0, max(0.0, float(v)))
        except (TypeError, ValueError):
            return 0.0


def json_object(text: str) -> dict[str, Any]:
    """The answer's JSON object (see driftgraph.llm.jsonreply), or ``ReplyFormatError`` saying why not."""
    try:
        return extract_json_object(text)
    except ReplyFormatError as err:
        raise ReplyFormatError(str(err)) from None


def records(obj: dict[str, Any], key: str, model: type[M]) -> tuple[list[M], int]:
    """Valid records under ``key`` and how many were dropped as invalid."""
    raw = obj.get(key) or []
    if not isinstance(raw, list):
        return [], 1
    out: list[M] = []
    dropped = 0
    for item in raw:
        try:
            out.append(model.model_validate(item))
        except ValidationError:
            dropped += 1
    return out, dropped


def parse_graph(text: str) -> tuple[list[EntityRecord], list[RelationshipRecord], int]:
    obj = json_object(text)
    if "entities" not in obj and "relationships" not in obj:
        raise ReplyFormatError('the object has neither "entities" nor "relationships"')
    entities, bad_e = records(obj, "entities", EntityRecord)
    rels, bad_r = records(obj, "relationships", RelationshipRecord)
    return entities, rels, bad_e + bad_r


def parse_claims(text: str) -> tuple[list[ClaimRecord], int]:
    obj = json_object(text)
    if "claims" not in obj:
        raise ReplyFormatError('the object has no "claims" list')
    return records(obj, "claims", ClaimRecord)


def parse_report(text: str) -> ReportRecord:
    obj = json_object(text)
    try:
        return ReportRecord.model_validate(obj)
    except ValidationError as err:
        first = err.errors()[0]
        raise ReplyFormatError(f"field '{'.'.join(map(str, first['loc']))}': {first['msg']}") from None
