"""The DRIFT backend over Neo4j and the configured models: report search, HyDE templates, step contexts.

Each step's context is built by local search's ``build_local_context`` with DRIFT's own ``drift.local``
settings and a budget derived for the DRIFT step prompt (docs/concepts/local-search.md arithmetic, capped by
``drift.local.context_cap``). The step's query vector comes from the queue's de-duplication embedding,
so a step costs no second embedding call.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from driftgraph.config import DriftConfig
from driftgraph.llm.tokenizer import truncate_tokens
from driftgraph.prompts import render_prompt
from driftgraph.query.drift.backend import PrimerReport
from driftgraph.query.drift.model import StepContext

if TYPE_CHECKING:
    from driftgraph.runtime import Runtime

# Table labels the local-search context uses for each source, i.e. what an answer cites.
CITATION_LABELS = {
    "chunk": "Sources",
    "entity": "Entities",
    "relationship": "Relationships",
    "report": "Reports",
    "claim": "Claims",
}


class GraphBackend:
    """``DriftBackend`` for one question: Neo4j through ``rt.store``, models through ``rt``."""

    def __init__(self, rt: Runtime, cfg: DriftConfig) -> None:
        self.rt = rt
        self.cfg = cfg
        self.chat = rt.chat()
        self._encoding = rt.config.tokenizer.encoding

    def count_tokens(self, text: str) -> int:
        return self.rt.count_tokens(text)

    def truncate(self, text: str, max_tokens: int) -> str:
        return truncate_tokens(text, max_tokens, self._encoding)

    def embed(self, texts: Sequence[str], phase: str = "steps") -> np.ndarray:
        return self.rt.embed(list(texts), phase=phase)

    def report_ids(self) -> list[str]:
        return [r["id"] for r in self.rt.store.read("query/drift_report_ids")]

    def report_text(self, report_id: str) -> str:
        rows = self.rt.store.read("query/drift_report_text", id=report_id)
        return (rows[0]["text"] or "") if rows else ""

    def primer_reports(self, vector: np.ndarray, k: int) -> list[PrimerReport]:
        rows = self.rt.store.read("query/drift_primer_reports", k=k, vector=[float(x) for x in vector])
        out = []
        for r in rows:
            text = r["text"] or ""
            tokens = r["n_tokens"] if r["n_tokens"] is not None else self.count_tokens(text)
            out.append(PrimerReport(r["id"], r["label"], r["title"], text, int(tokens), float(r["score"])))
        return out

    def step_budget(self, global_query: str, query: str) -> Any:
        """The context budget of one step: model window minus answer, DRIFT prompt and question."""
        from driftgraph.query.budget import Demand, derive_budget

        settings = self.cfg.local
        prompt = render_prompt(
            "drift_local",
            self.rt.config.prompts,
            context_data="",
            global_query=global_query,
            query=query,
            max_follow_ups=self.cfg.max_follow_ups_per_answer,
            response_type=self.cfg.local.response_type,
        )
        return derive_budget(
            Demand(
                window=self.rt.config.llm.model_context_window,
                answer_reserve=settings.answer_reserve,
                prompt=self.count_tokens(prompt) + 7,  # + chat-format overhead of one message
                question=0,  # the question is inside the rendered prompt already
                history=0,
                cap=settings.context_cap,
            )
        )

    def step_context(self, global_query: str, query: str, vector: np.ndarray) -> StepContext:
        from driftgraph.query.local.search import LocalAsk, build_local_context

        breakdown = self.step_budget(global_query, query)
        ask = LocalAsk(query, budget=breakdown.context, query_vector=np.asarray(vector))
        ctx = build_local_context(self.rt, ask, self.cfg.local)
        shown: dict[str, set[str]] = {}
        id_map: dict[str, dict[str, str]] = {}
        items = []
        for c in ctx.included:
            label = CITATION_LABELS.get(c.source, c.source)
            shown.setdefault(label, set()).add(str(c.rank))
            id_map.setdefault(label, {})[str(c.rank)] = c.id
            row = {"source": c.source, "id": c.id, "rank": c.rank, "tokens": c.tokens, "hop": c.hop}
            if (c.payload or {}).get("rerank_score") is not None:  # drift.local.rerank ran on this step
                row["rerank_score"] = c.payload["rerank_score"]
            items.append(row)
        budget = breakdown.to_dict()
        budget["fixed"] = False
        return StepContext(ctx.text, ctx.tokens, shown, items, budget, id_map)
