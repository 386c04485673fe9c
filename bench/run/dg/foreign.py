"""Contexts driftgraph did not assemble, answered by the same model through the same call: ``bench answers``'
``vector`` and ``graphrag_local`` modes.

- ``vector``: the floor every graph method must beat (``bench/run/vector_only.py``): the index's text units by
  exact cosine to the question, whole, best first, until the budget is full; shown as basic search shows
  chunks (``----- Source N -----``) under ``prompts/basic_search.txt``.
- ``graphrag_local``: GraphRAG 3.2.0's local context and its own local-search system prompt, as its
  ``LocalSearch`` would send them (system: the prompt with the context; user: the question), prepared in the
  baseline's virtualenv by ``python -m bench gr-contexts``.

Both go through the engine's chat client and ``checked_chat_answer``, as every driftgraph mode's answer does:
same model, same temperature, same output cap, same check and single retry of a reply that is no answer. So
the modes differ only in the context (and, for GraphRAG, its prompt).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from bench.run import vector_only
from driftgraph.prompts import render_prompt
from driftgraph.query.answer import checked_chat_answer
from driftgraph.query.basic.search import SEPARATOR, render_chunk


@dataclass
class Foreign:
    """One foreign context and the messages that ask it: what ``answer`` sends."""

    context: str
    tokens: int
    messages: list[dict[str, str]]


class VectorOnly:
    """Vector-only contexts over one set of text units, embedded once by the engine's embedder."""

    def __init__(self, eng: Any, units: dict[str, str], budget: int, response_type: str) -> None:
        self.eng, self.units, self.budget, self.response_type = eng, units, budget, response_type
        self.ids = sorted(units)
        texts = [units[i] for i in self.ids]
        self.tokens = [eng.runtime.count_tokens(t) for t in texts]
        self.vectors = np.asarray(eng.embed(texts))
        self.texts = texts

    def context(self, question: str) -> Foreign:
        qv = np.asarray(self.eng.embed([question]))[0]
        picked, _ = vector_only.assemble(qv, self.ids, self.vectors, self.texts, self.tokens, self.budget)
        rt = self.eng.runtime
        text = self._render(picked)
        while picked and rt.count_tokens(text) > self.budget:  # the source headers count too, as in basic search
            picked.pop()
            text = self._render(picked)
        system = render_prompt("basic_search", rt.config.prompts, sources=text, response_type=self.response_type)
        messages = [{"role": "system", "content": system}, {"role": "user", "content": question}]
        return Foreign(text, rt.count_tokens(text) if text else 0, messages)

    def _render(self, picked: list[str]) -> str:
        return SEPARATOR.join(render_chunk(n, self.units[i]) for n, i in enumerate(picked, start=1))


def graphrag_context(row: dict[str, Any], question: str, count_tokens: Any) -> Foreign:
    """A ``gr-contexts`` row: GraphRAG's filled system prompt, and the question as the user message."""
    messages = [{"role": "system", "content": row["system"]}, {"role": "user", "content": question}]
    return Foreign(row["context"], count_tokens(row["context"]), messages)


def answer(eng: Any, foreign: Foreign, max_tokens: int) -> dict[str, Any]:
    """The checked answer (None when every attempt failed the check), its calls and why it failed."""
    rt = eng.runtime
    check = checked_chat_answer(rt, rt.chat(), "answer", foreign.messages, max_tokens)
    prompt_tokens = sum(rt.count_tokens(m["content"]) for m in foreign.messages)
    return {
        "answer": check.answer,
        "llm_calls": len(check.attempts),
        "prompt_tokens": prompt_tokens * len(check.attempts),
        "problem": None if check.answer is not None else str(check.problem),
    }
