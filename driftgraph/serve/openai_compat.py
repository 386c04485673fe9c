"""The OpenAI-compatible face: ``GET /v1/models`` and ``POST /v1/chat/completions``, so any OpenAI client or
chat UI can talk to the index.

Models ``driftgraph-local|drift|global|basic`` pick the mode. The last message must be the user's question;
for local, DRIFT and global search the earlier messages are its ``history`` (a follow-up is rewritten into a
standalone question); basic search takes no history: it answers the last user message alone. The
completion's ``id`` is the retrieval id (in a stream: the last chunk's, the one with ``finish_reason`` and
``usage``, since the trace is stored after the answer) and ``usage`` the run's tokens. OpenAI sampling
parameters (temperature, max_tokens ...) are accepted and ignored: the config and the derived budgets decide.
"""

from __future__ import annotations

import time
import uuid
from typing import Any, Literal

from fastapi import APIRouter, Request
from fastapi.responses import Response, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from driftgraph import BasicQuery, DriftQuery, GlobalQuery, LocalQuery, QueryRequest, SearchResult
from driftgraph.serve.errors import ApiError
from driftgraph.serve.routes_query import SSE_HEADERS, json_response
from driftgraph.serve.sse import events, frame
from driftgraph.serve.state import get_state, request_id

router = APIRouter()
MODELS: dict[str, type[QueryRequest]] = {
    "driftgraph-local": LocalQuery,
    "driftgraph-drift": DriftQuery,
    "driftgraph-global": GlobalQuery,
    "driftgraph-basic": BasicQuery,
}
CREATED = int(time.time())


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="ignore")

    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[dict[str, Any]] | None = None


class ChatRequest(BaseModel):
    """The part of OpenAI's chat request driftgraph reads; other keys are accepted and ignored."""

    model_config = ConfigDict(extra="ignore")

    model: str = Field(description="driftgraph-local, driftgraph-drift, driftgraph-global or driftgraph-basic.")
    messages: list[ChatMessage] = Field(min_length=1, description="The conversation; the last one is the question.")
    stream: bool = Field(False, description="Server-sent chunks in OpenAI's format, then [DONE].")


def _text(message: ChatMessage) -> str:
    if message.content is None:
        return ""
    if isinstance(message.content, str):
        return message.content
    return "".join(str(p.get("text", "")) for p in message.content if p.get("type") == "text")


def to_request(chat: ChatRequest) -> QueryRequest:
    """Messages -> the mode's request: the last user message is the question, earlier turns its history."""
    cls = MODELS.get(chat.model)
    if cls is None:
        raise ApiError(
            400, f"unknown model '{chat.model}' (GET /v1/models lists them)", "invalid_request_error", "model"
        )
    last = chat.messages[-1]
    if last.role != "user":
        raise ApiError(400, "the last message must be the user's question", "invalid_request_error", "messages")
    if "history" in cls.model_fields:
        history = [
            {"role": "system" if m.role == "developer" else m.role, "content": _text(m)}
            for m in chat.messages[:-1]
            if m.role in ("system", "developer", "user", "assistant")
        ]
        return cls.parse({"question": _text(last), "history": history})
    return cls.parse({"question": _text(last)})


def usage(result: SearchResult) -> dict[str, int]:
    p, c = result.cost.prompt_tokens, result.cost.completion_tokens
    return {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}


def completion(result: SearchResult, model: str) -> dict[str, Any]:
    return {
        "id": result.retrieval_id or f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": result.answer or ""}, "finish_reason": "stop"}
        ],
        "usage": usage(result),
    }


def chunk(cid: str, model: str, delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
    out = {
        "id": cid,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    out.update(extra)
    return out


@router.get("/v1/models", tags=["openai"])
async def list_models() -> dict[str, Any]:
    """The four query modes as models."""
    data = [{"id": m, "object": "model", "created": CREATED, "owned_by": "driftgraph"} for m in MODELS]
    return {"object": "list", "data": data}


@router.post("/v1/chat/completions", tags=["openai"])
async def chat_completions(chat: ChatRequest, request: Request) -> Response:
    """OpenAI's chat completion over one of the modes; the id is the retrieval id."""
    state, req_id = get_state(request), request_id(request)
    question = to_request(chat)
    if not chat.stream:
        result = await state.ask(question, "openai", req_id, request.is_disconnected)
        return json_response(completion(result, chat.model))
    cid = f"chatcmpl-{uuid.uuid4().hex}"
    stream = state.stream(question, "openai", req_id)
    first = [True]

    def on_token(token: str) -> str:
        delta = {"role": "assistant", "content": token} if first[0] else {"content": token}
        first[0] = False
        return frame(chunk(cid, chat.model, delta))

    def on_result(result: SearchResult) -> list[str]:
        rid = result.retrieval_id or cid
        frames = []
        if first[0]:  # nothing streamed (context-only modes, no data): send the answer whole
            frames.append(frame(chunk(rid, chat.model, {"role": "assistant", "content": result.answer or ""})))
        frames.append(frame(chunk(rid, chat.model, {}, "stop", usage=usage(result))))
        frames.append(frame("[DONE]"))
        return frames

    def on_error(body: dict[str, Any]) -> list[str]:
        return [frame(body), frame("[DONE]")]

    return StreamingResponse(
        events(stream, on_token, on_result, on_error), media_type="text/event-stream", headers=SSE_HEADERS
    )
