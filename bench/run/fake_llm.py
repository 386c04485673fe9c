"""The fake model's replies for both systems, so driftgraph and GraphRAG 3.2.0 face the same behaviour.

Both run against ``tests/support/fake_openai.py`` on 127.0.0.1. Global search uses the tests' global
responder as is (it already answers GraphRAG's rating and map prompts). DRIFT uses the tests' tree
responder (``tests/support/drift_fakes.py``: follow-ups drawn from fixed layers of distinct Dulce
questions, the score a function of depth); GraphRAG's DRIFT requests are translated into the shape that
responder knows (HyDE, primer fold, step with its follow-up question, reduce), so a GraphRAG step about
question Q gets exactly the reply a driftgraph step about Q gets.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

Responder = Callable[[dict[str, Any]], str]


def _content(m: dict[str, Any]) -> str:
    c = m.get("content")
    if isinstance(c, list):
        return " ".join(p.get("text", "") for p in c if isinstance(p, dict))
    return c or ""


def graphrag_drift_kind(request: dict[str, Any]) -> str | None:
    """GraphRAG 3.2.0's DRIFT request kinds (``None`` when the request is not GraphRAG-shaped)."""
    msgs = request.get("messages") or []
    text = "\n".join(_content(m) for m in msgs)
    fmt = request.get("response_format") or {}
    if "Create a hypothetical answer to the following query" in text:
        return "hyde"
    if fmt.get("type") == "json_schema" and "intermediate_answer" in json.dumps(fmt):
        return "primer"
    system = "\n".join(_content(m) for m in msgs if m.get("role") == "system")
    if fmt.get("type") == "json_object" or "---Data tables---" in system:
        return "step"  # DRIFT's local step (its JSON request flag does not reach the wire in 3.2.0)
    if "---Data Reports---" in system:
        return "reduce"
    return None


def step_question(request: dict[str, Any]) -> str:
    """The follow-up question a GraphRAG DRIFT step request answers (its last user message)."""
    users = [_content(m) for m in request.get("messages") or [] if m.get("role") == "user"]
    return users[-1].strip() if users else ""


def layer_of(question: str) -> int | None:
    """Which layer of the scenarios' distinct follow-up questions ``question`` is (0 = the primer's), or None."""
    from tests.support.drift_fakes import DULCE_LAYERS

    for depth, layer in enumerate(DULCE_LAYERS):
        if question.strip() in layer:
            return depth
    return None


def drift_responder(tree: Responder) -> Responder:
    """``tree`` (a ``tree_responder``) for driftgraph requests; GraphRAG requests are translated for it."""

    def respond(request: dict[str, Any]) -> str:
        kind = graphrag_drift_kind(request)
        if kind is None:
            return tree(request)
        msgs = request.get("messages") or []
        if kind == "hyde":
            return tree({"messages": [{"role": "user", "content": "hypothetical report"}]})
        if kind == "reduce":
            return tree({"messages": [{"role": "user", "content": "reduce"}]})
        if kind == "primer":
            fold = hashlib.sha256("\n".join(_content(m) for m in msgs).encode()).hexdigest()[:6]
            fake = {
                "response_format": {"type": "json_schema", "json_schema": {"name": "drift_primer"}},
                "messages": [{"role": "user", "content": f"Report g{fold}: primer fold"}],
            }
            return tree(fake)
        question = step_question(request)
        fake = {
            "response_format": {"type": "json_schema", "json_schema": {"name": "drift_step"}},
            "messages": [{"role": "system", "content": f"Follow-up question of this step: {question}"}],
        }
        return tree(fake)

    return respond


def prompt_tokens(request: dict[str, Any]) -> int:
    """cl100k tokens of every message's content: one count for both systems."""
    from driftgraph.llm.tokenizer import count_tokens

    return sum(count_tokens(_content(m), "cl100k_base") for m in request.get("messages") or [])


def chat_cost(requests: list[dict[str, Any]]) -> dict[str, int]:
    chats = [r for r in requests if r["_path"].endswith("/chat/completions")]
    return {"chat_calls": len(chats), "prompt_tokens": sum(prompt_tokens(r) for r in chats)}


def drift_scenarios() -> dict[str, Responder]:
    """The model behaviours DRIFT is measured under (both systems, same replies).

    * ``worst``: follow-ups from 3 layers of 10 distinct Dulce questions, the score rises with depth (never
      sufficient, never a plateau): driftgraph runs until its budget or depth limit;
    * ``flat``: the same pool, every answer scores 50 (driftgraph's plateau rule stops after one epoch);
    * ``unbounded``: every answer proposes 3 new follow-ups ("<parent> then part k"), score rising:
      GraphRAG's worst case (BASELINE.md's 67 calls); driftgraph's semantic dedup sees near-twins.
    """
    from tests.support.drift_fakes import DULCE_LAYERS, tree_responder

    rising = lambda q, d: min(85, 40 + 10 * d)  # noqa: E731
    return {
        "worst": drift_responder(tree_responder(score=rising, layers=DULCE_LAYERS)),
        "flat": drift_responder(tree_responder(score=lambda q, d: 50, layers=DULCE_LAYERS)),
        "unbounded": drift_responder(tree_responder(score=rising)),
    }


DULCE_QUESTIONS = [
    "What are the main themes of the story?",
    "What is the role of the Paranormal Military Squad at Dulce base?",
    "What happened in the mainframe room?",
    "How do the agents communicate with the alien intelligence?",
    "Who leads the team and how are decisions made?",
]
