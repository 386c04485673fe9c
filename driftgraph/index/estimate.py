"""``driftgraph index DIR --estimate``: what a run would cost, per stage, before any chat call is made.

The pipeline's own stages run against a *dry* chat client: a call whose answer is in the call cache replays it
(it costs nothing, as in a real run); any other call is counted — prompt tokens from the real messages, the
completion at its ``max_tokens`` cap (an upper bound) — and answered with a placeholder, so extraction walks
every gleaning round (an upper bound too: a real run stops early when a round finds nothing).

When every extraction is cached, merging, clustering, summaries and reports run on the real extracted graph and
their counts are exact. Otherwise the graph is unknown and those stages are estimated from the number of chunks
(``index.estimate_*`` keys): the ``basis`` column says which.

Each stage has two figures. The *bound* counts every reply at its ``max_tokens`` cap and every input at its cap,
so a run does not spend more on the stages counted (tokens counted with ``tokenizer.encoding``: a server that
counts with its own tokenizer, or that is sent the schema in the prompt after a format fallback, reports a few
percent more). The *expected* figure counts replies at their typical size
(``estimate_record_tokens`` per extracted record, ``estimate_gleaning_share`` of it for a gleaning round,
``estimate_report_tokens`` per report) and inputs at what the graph would hold; it is what to budget with
(``python -m bench estimate-check`` sets both against real runs). Repair retries (one per unusable answer) are
not counted. Prices come from ``index.prices`` (USD per million tokens, per chat model); with ``batch`` (``index
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
    # a placeholder must pass its parser, or every uncounted call would be counted again as its repair
    "report": '{"title": "ESTIMATE", "summary": "ESTIMATE", "rating": 0, "rating_explanation": "", "findings": []}',
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
    expected_calls: int = 0
    expected_prompt_tokens: int = 0
    expected_completion_tokens: int = 0
    expected_price_usd: float | None = None

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
            return ChatResult.from_cache(hit, key)  # a cut reply is salvaged, as in a real run
        enc = self._full.tokenizer.encoding
        placeholder = _PLACEHOLDER.get(phase, "estimate")
        prompt = expected = 3
        for m in messages:
            text = m.get("content") or ""
            if text in _PLACEHOLDER.values():  # a placeholder answer in the history stands for a real one
                prompt += MESSAGE_OVERHEAD + max_tokens
                expected += MESSAGE_OVERHEAD + expected_reply(self._full.index, "extract", max_tokens)
            else:
                n = MESSAGE_OVERHEAD + count_tokens(text, enc)
                prompt, expected = prompt + n, expected + n
        with self._lock:
            est.calls += 1
            est.prompt_tokens += prompt
            est.completion_tokens_max += max_tokens
            est.expected_calls += 1
            est.expected_prompt_tokens += expected
            est.expected_completion_tokens += expected_reply(self._full.index, phase, max_tokens)
        return ChatResult(placeholder, 0, 0, False, None)

    def evict(self, result: ChatResult) -> None:
        """Nothing to forget: a dry run never writes the cache."""


def expected_reply(icfg: IndexConfig, phase: str, max_tokens: int) -> int:
    """A reply's typical size in ``phase``, never above its cap: an extraction lists the expected records, a
    gleaning round a share of that, claims at most one per expected entity, a summary a few descriptions' worth."""
    records = icfg.estimate_entities_per_chunk + icfg.estimate_relationships_per_chunk
    typical = {
        "extract": records * icfg.estimate_record_tokens,
        "extract_gleaning": records * icfg.estimate_record_tokens * icfg.estimate_gleaning_share,
        "extract_claims": icfg.estimate_entities_per_chunk * icfg.estimate_record_tokens,
        "summarize": 4 * icfg.estimate_record_tokens,
        "report": icfg.estimate_report_tokens,
    }
    return min(max_tokens, math.ceil(typical.get(phase, max_tokens)))


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

    def usd(prompt: int, completion: int) -> float | None:
        if price is None:
            return None
        return round(factor * (prompt * price.prompt + completion * price.completion) / 1e6, 4)

    for row in rows:
        row.price_usd = usd(row.prompt_tokens, row.completion_tokens_max)
        row.expected_price_usd = usd(row.expected_prompt_tokens, row.expected_completion_tokens)
    total: dict[str, Any] = {
        key: sum(getattr(r, key) for r in rows)
        for key in (
            "calls", "cached", "prompt_tokens", "completion_tokens_max",
            "expected_calls", "expected_prompt_tokens", "expected_completion_tokens",
        )
    }  # fmt: skip
    total["price_usd"] = usd(total["prompt_tokens"], total["completion_tokens_max"])
    total["expected_price_usd"] = usd(total["expected_prompt_tokens"], total["expected_completion_tokens"])
    return {
        "input": str(path),
        "model": cfg.llm.model,
        "batch": batch,
        "documents": len(loaded.documents),
        "chunks": len(chunks),
        "stages": [r.to_dict() for r in rows],
        "total": total,
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
    summary_frame = 3 + MESSAGE_OVERHEAD + count_tokens(summary_prompt, enc)
    per_summary = summary_frame + icfg.summarize_input_max_tokens
    # hierarchical Leiden: leaves average half the size cap; the levels above add about half as many again
    communities = math.ceil(math.ceil(entities / max(1.0, icfg.max_cluster_size / 2)) * 1.5) if entities else 0
    report_prompt = render_prompt("community_report", cfg.prompts, input_text="")
    report_frame = 3 + MESSAGE_OVERHEAD + count_tokens(report_prompt, enc)
    per_report = report_frame + icfg.report_max_input_tokens
    summarize = StageEstimate("summarize", summaries, 0, summaries * per_summary, summaries * cap, "heuristic")
    report = StageEstimate(
        "report", communities, 0, communities * per_report, communities * icfg.report_max_tokens, "heuristic"
    )
    # expected: a merged description holds at most one description per chunk, so when that many descriptions
    # fit under the cap none is summarised; one that is summarised is just over the cap
    if len(chunks) * icfg.estimate_record_tokens > cap:
        summarize.expected_calls = summaries
        summarize.expected_prompt_tokens = summaries * (summary_frame + min(cap, icfg.summarize_input_max_tokens))
        summarize.expected_completion_tokens = summaries * expected_reply(icfg, "summarize", cap)
    # expected: each level's reports read every record once (a community's descriptions), within the input cap
    described = math.ceil(1.5 * (entities + relationships) * icfg.estimate_record_tokens)
    report.expected_calls = communities
    report.expected_prompt_tokens = communities * report_frame + min(
        communities * icfg.report_max_input_tokens, described
    )
    report.expected_completion_tokens = communities * expected_reply(icfg, "report", icfg.report_max_tokens)
    return {"summarize": summarize, "report": report}
