"""``driftgraph index DIR --estimate``: what a run would cost, per stage, before any chat call is made.

The pipeline's own stages run against a *dry* chat client: a call whose answer is in the call cache replays it
(it costs nothing, as in a real run); any other call is counted — prompt tokens from the real messages, the
completion at its ``max_tokens`` cap (an upper bound) — and answered with a placeholder, so extraction walks
every gleaning round (an upper bound too: a real run stops early when a round finds nothing).

When every extraction is cached, merging, clustering, summaries and reports run on the real extracted graph and
their counts are exact. Otherwise the graph is unknown and those stages are estimated from the number of chunks
(``index.estimate_*`` keys): the ``basis`` column says which. Repair retries (one per unusable answer) are not
counted. Prices come from ``index.prices`` (USD per million tokens, per chat model); with ``batch`` (``index
--batch --estimate``) they are multiplied by ``index.batch_price_factor`` (the Batch API's discount).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from driftgraph.config import Config, IndexConfig
from driftgraph.index.chunk import Chunk, chunk_documents
from driftgraph.index.communities import detect_communities
from driftgraph.index.extract import extract_all
from driftgraph.index.load import load_documents
from driftgraph.index.merge import merge, summarize_descriptions
from driftgraph.index.reports import generate_reports
from driftgraph.llm.cache import CallCache
from driftgraph.llm.chat import ChatClient, ChatResult, request_params
from driftgraph.llm.ledger import Ledger
from driftgraph.llm.tokenizer import count_tokens
from driftgraph.prompts import render_prompt

STAGES = ("extract", "extract_gleaning", "extract_claims", "summarize", "report")
MESSAGE_OVERHEAD = 4  # tokens the chat format adds per message (role, separators); +3 per request
_PLACEHOLDER = {
    "extract": '{"entities": [{"title": "ESTIMATE", "type": "ESTIMATE", "description": ""}], "relationships": []}',
    "extract_claims": '{"claims": []}',
    "report": '{"title": "", "summary": "", "rating": 0, "rating_explanation": "", "findings": []}',
}
_PLACEHOLDER["extract_gleaning"] = _PLACEHOLDER["extract"]


@dataclass
class StageEstimate:
    stage: str
    calls: int = 0
    cached: int = 0
    prompt_tokens: int = 0
    completion_tokens_max: int = 0
    basis: str = "counted"  # counted: the pipeline's real requests; heuristic: from chunk counts
    price_usd: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


class DryChat(ChatClient):
    """A ChatClient that never sends: cached answers replay, anything else is tallied and gets a placeholder."""

    def __init__(self, cfg: Config, cache: CallCache) -> None:  # no openai client: nothing is ever sent
        self._cfg = cfg.llm
        self._full = cfg
        self._cache = self._calls = cache
        self.ledger = Ledger()
        self.successes = 1  # ask_json's "endpoint down" rule never trips on a dry run
        self.failures_in_a_row = 0
        self.stages = {s: StageEstimate(s) for s in STAGES}
        self._lock = threading.Lock()

    def complete(
        self,
        messages: list[dict[str, str]],
        *,
        phase: str,
        max_tokens: int,
        json_schema: dict[str, Any] | None = None,
        **_: Any,
    ) -> ChatResult:
        params = request_params(self._full.llm, messages, max_tokens, json_schema)
        key = self._calls.key(params)
        hit = self._calls.get(key)
        with self._lock:
            est = self.stages.setdefault(phase, StageEstimate(phase))
        if hit is not None:
            with self._lock:
                est.cached += 1
            return ChatResult(hit["text"], hit["prompt_tokens"], hit["completion_tokens"], True, key)
        enc = self._full.tokenizer.encoding
        placeholder = _PLACEHOLDER.get(phase, "estimate")
        prompt = 3
        for m in messages:
            text = m.get("content") or ""
            # a placeholder answer in the history stands for a real one of up to max_tokens
            prompt += MESSAGE_OVERHEAD + (max_tokens if text in _PLACEHOLDER.values() else count_tokens(text, enc))
        with self._lock:
            est.calls += 1
            est.prompt_tokens += prompt
            est.completion_tokens_max += max_tokens
        return ChatResult(placeholder, 0, 0, False, None)

    def evict(self, result: ChatResult) -> None:
        """Nothing to forget: a dry run never writes the cache."""


def estimate_index(cfg: Config, path: str | Path, *, batch: bool = False) -> dict[str, Any]:
    """Per-stage calls, tokens and price of indexing ``path`` with this config (no chat call, no database)."""
    icfg = cfg.index
    loaded = load_documents(path, icfg)
    chunks = chunk_documents(loaded.documents, icfg.chunk_size, icfg.chunk_overlap, cfg.tokenizer.encoding)
    dry = DryChat(cfg, CallCache(icfg.cache_dir))
    extractions = extract_all(chunks, dry, cfg)
    all_cached = all(s.calls == 0 for s in dry.stages.values())
    if all_cached:  # the real graph is known: later stages are counted like extraction
        graph = merge(chunks, extractions)
        summarize_descriptions(graph, dry, cfg)
        communities = detect_communities(graph, icfg.max_cluster_size, icfg.seed)
        generate_reports(graph, communities, dry, cfg, existing={})
        stages = dry.stages
    else:
        stages = {**dry.stages, **_heuristic_later_stages(cfg, chunks)}
    if not icfg.claims:
        stages.pop("extract_claims", None)
    rows = [stages[s] for s in stages]
    price = icfg.prices.get(cfg.llm.model)
    factor = icfg.batch_price_factor if batch else 1.0
    for row in rows:
        if price is not None:
            row.price_usd = round(
                factor * (row.prompt_tokens * price.prompt + row.completion_tokens_max * price.completion) / 1e6, 4
            )
    priced = [r.price_usd for r in rows if r.price_usd is not None]
    return {
        "input": str(path),
        "model": cfg.llm.model,
        "batch": batch,
        "documents": len(loaded.documents),
        "chunks": len(chunks),
        "stages": [r.to_dict() for r in rows],
        "total": {
            "calls": sum(r.calls for r in rows),
            "cached": sum(r.cached for r in rows),
            "prompt_tokens": sum(r.prompt_tokens for r in rows),
            "completion_tokens_max": sum(r.completion_tokens_max for r in rows),
            "price_usd": round(sum(priced), 4) if price is not None else None,
        },
        "note": None if price is not None else f"no price for model '{cfg.llm.model}' in index.prices",
    }


def _heuristic_later_stages(cfg: Config, chunks: Sequence[Chunk]) -> dict[str, StageEstimate]:
    """Summaries and reports when the extracted graph is not known yet: sized from the chunk count."""
    icfg: IndexConfig = cfg.index
    enc = cfg.tokenizer.encoding
    entities = math.ceil(len(chunks) * icfg.estimate_entities_per_chunk)
    relationships = math.ceil(len(chunks) * icfg.estimate_relationships_per_chunk)
    summaries = math.ceil((entities + relationships) * icfg.estimate_summarized_share)
    cap = icfg.description_max_tokens
    summary_prompt = render_prompt(
        "summarize_descriptions", cfg.prompts, kind="entity", title="", descriptions="", max_words=max(10, cap * 3 // 4)
    )
    per_summary = 3 + MESSAGE_OVERHEAD + count_tokens(summary_prompt, enc) + icfg.summarize_input_max_tokens
    # hierarchical Leiden: leaves average half the size cap; the levels above add about half as many again
    communities = math.ceil(math.ceil(entities / max(1.0, icfg.max_cluster_size / 2)) * 1.5) if entities else 0
    report_prompt = render_prompt("community_report", cfg.prompts, input_text="")
    per_report = 3 + MESSAGE_OVERHEAD + count_tokens(report_prompt, enc) + icfg.report_max_input_tokens
    return {
        "summarize": StageEstimate("summarize", summaries, 0, summaries * per_summary, summaries * cap, "heuristic"),
        "report": StageEstimate(
            "report", communities, 0, communities * per_report, communities * icfg.report_max_tokens, "heuristic"
        ),
    }
