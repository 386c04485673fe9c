"""One deterministic responder for the fake OpenAI-compatible server, shared by driftgraph and GraphRAG runs.

Answers depend only on the request's messages (seeded by their sha256), so two runs of the same system
get the same replies, and both systems get replies of the same shape: JSON that fills whatever schema a
``json_schema`` request names, GraphRAG's JSON shapes (``response``/``score``/``follow_up_queries``,
``points``) when the prompt asks for JSON, and plain text otherwise. Follow-up questions are built from
capitalised words of the prompt, so some repeat and deduplication has something to do.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from typing import Any

_WORD = re.compile(r"\b[A-Z][a-z]{3,}\b")


def _text(request: dict[str, Any]) -> str:
    parts = []
    for m in request.get("messages", []):
        c = m.get("content")
        if isinstance(c, list):
            c = " ".join(p.get("text", "") for p in c if isinstance(p, dict))
        parts.append(c or "")
    return "\n".join(parts)


def _rng(text: str) -> random.Random:
    return random.Random(int(hashlib.sha256(text.encode()).hexdigest()[:16], 16))


def _topics(text: str) -> list[str]:
    words = sorted(set(_WORD.findall(text)))
    return words or ["Topic"]


def _follow_ups(rng: random.Random, topics: list[str], n: int) -> list[str]:
    return [f"What is the connection between {rng.choice(topics)} and {rng.choice(topics)}?" for _ in range(n)]


def _sentence(rng: random.Random, topics: list[str]) -> str:
    return f"{rng.choice(topics)} is related to {rng.choice(topics)} [Data: Reports (1); Sources (1)]."


def _fill(schema: dict[str, Any], name: str, rng: random.Random, topics: list[str]) -> Any:
    kind = schema.get("type", "string")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "string")
    if "enum" in schema:
        return schema["enum"][0]
    if kind == "object":
        props = schema.get("properties", {})
        return {k: _fill(v, k, rng, topics) for k, v in props.items()}
    if kind == "array":
        item = schema.get("items", {"type": "string"})
        if item.get("type", "string") == "string":
            n = 5 if ("follow" in name or "quer" in name) else 3
            return _follow_ups(rng, topics, n) if n == 5 else [_sentence(rng, topics) for _ in range(n)]
        return [_fill(item, name, rng, topics) for _ in range(3)]
    if kind in ("integer", "number"):
        lo, hi = schema.get("minimum", 0), schema.get("maximum", 100)
        if hi <= 1:
            return round(rng.uniform(0.2, 0.8), 2)
        return rng.randint(int(lo + (hi - lo) * 0.2), int(lo + (hi - lo) * 0.8))
    if kind == "boolean":
        return False
    return _sentence(rng, topics)


def responder(request: dict[str, Any]) -> str:
    text = _text(request)
    rng = _rng(text)
    topics = _topics(text)
    fmt = request.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return json.dumps(_fill(fmt["json_schema"]["schema"], "", rng, topics))
    if fmt.get("type") == "json_object" or "JSON" in text or "json" in text:
        return json.dumps(
            {
                "response": _sentence(rng, topics),
                "score": rng.randint(20, 80),
                "follow_up_queries": _follow_ups(rng, topics, 5),
                "points": [{"description": _sentence(rng, topics), "score": rng.randint(1, 100)} for _ in range(3)],
            }
        )
    return " ".join(_sentence(rng, topics) for _ in range(3))


def prompt_tokens(request: dict[str, Any]) -> int:
    """cl100k tokens of every message's content: the same count for both systems."""
    from driftgraph.llm.tokenizer import count_tokens

    return count_tokens(_text(request), "cl100k_base")


def summarize(requests: list[dict[str, Any]]) -> dict[str, int]:
    chats = [r for r in requests if r["_path"].endswith("/chat/completions")]
    embeds = [r for r in requests if r["_path"].endswith("/embeddings")]
    return {
        "chat_calls": len(chats),
        "prompt_tokens": sum(prompt_tokens(r) for r in chats),
        "embedding_calls": len(embeds),
    }
