"""``driftgraph index DIR --batch``: every chat call of the pipeline through the Batch API, in stage rounds.

The pipeline's own stages run against ``BatchChat`` in *collect* mode: a cached answer replays, any other
request is set aside and answered with a placeholder that carries a marker. A request whose messages hold
the marker depends on an answer not given yet (a gleaning round, a parent report, a repair of a pending
answer) and is not collected: it comes in a later round. When a pass over a stage collects nothing new, the
stage is done and the next one starts (summaries need every extraction, reports every summary). Each round
is one batch (llm/batches.py), whose answers fill the call cache. Then the ordinary ``run_index`` runs with
``BatchChat`` in *final* mode: every answer is a cache hit, a failed batch line fails its item the way a
failed direct call does, and no direct chat call is ever made.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from driftgraph.config import Config
from driftgraph.errors import FatalLLMError, LLMUnavailable
from driftgraph.index.chunk import chunk_documents
from driftgraph.index.communities import detect_communities
from driftgraph.index.extract import extract_all
from driftgraph.index.load import load_documents
from driftgraph.index.merge import merge, summarize_descriptions
from driftgraph.index.partition import Previous
from driftgraph.index.progress import Bars
from driftgraph.index.reports import generate_reports
from driftgraph.index.summary import BatchRound, BatchStats, IndexSummary
from driftgraph.index.write import stored_report
from driftgraph.llm.batches import run_round
from driftgraph.llm.cache import CallCache
from driftgraph.llm.chat import ChatClient, ChatResult, request_params
from driftgraph.llm.ledger import Ledger

if TYPE_CHECKING:
    from driftgraph.runtime import Runtime

MARKER = "\u2063driftgraph-batch-pending\u2063"
_PENDING = {
    "extract": '{"entities": [{"title": "M", "type": "M", "description": "M"}], "relationships": []}',
    "extract_claims": '{"claims": []}',
    "report": '{"title": "M", "summary": "M", "rating": 0, "rating_explanation": "M", "findings": []}',
}
MAX_ROUNDS_PER_STAGE = 64


def _pending_answer(phase: str) -> str:
    text = _PENDING.get("extract" if phase == "extract_gleaning" else phase, '"M"')
    return text.replace('"M"', f'"{MARKER}"') if text != '"M"' else MARKER


class BatchChat(ChatClient):
    """Collect mode: sets uncached requests aside. Final mode: cache hits only; failed lines fail their item."""

    def __init__(self, cfg: Config, cache: CallCache, ledger: Ledger | None = None) -> None:
        self._cfg = cfg.llm
        self._full = cfg
        self._cache = self._calls = cache
        self.ledger = ledger or Ledger()
        self.successes = 1  # "endpoint down" never applies: nothing is sent from here
        self.failures_in_a_row = 0
        self.collecting = True
        self.pending: dict[str, tuple[str, dict[str, Any]]] = {}  # key -> (phase, params)
        self.failed: dict[str, str] = {}
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
        if hit is not None:
            self.ledger.record(phase, cache_hits=1)
            return ChatResult.from_cache(hit, key)
        if key in self.failed:
            self.ledger.record(phase, failed_calls=1)
            raise LLMUnavailable(self.failed[key], endpoint=self._cfg.base_url, status="batch")
        if not self.collecting:
            raise FatalLLMError(f"batch mode: a {phase} request was not answered by any batch (no direct calls)")
        if not any(MARKER in (m.get("content") or "") for m in messages):
            with self._lock:
                self.pending.setdefault(key, (phase, params))
        return ChatResult(_pending_answer(phase), 0, 0, True, None)

    def evict(self, result: ChatResult) -> None:
        """Final mode drops an unusable answer like a direct run (the next run asks again); collect mode keeps
        it, or the next pass would collect the same request again and never settle."""
        if not self.collecting and result.cache_key is not None:
            self._calls.delete(result.cache_key)


def index_with_batches(
    rt: Runtime, path: str | Path, *, reset: bool, progress: bool, reset_traces: bool = False
) -> IndexSummary:
    """Batches fill the cache stage by stage, then the ordinary run reads only the cache; summary + ``batch``.

    A database ``index`` would refuse (an imported GraphRAG index without ``--reset``, an adopted graph) is
    refused here first, before any file or batch is created."""
    from driftgraph.index.pipeline import refuse_unsyncable, run_index

    refuse_unsyncable(rt.store, reset=reset)
    stats = prefill_with_batches(rt, path, reset=reset, progress=progress)
    chat = BatchChat(rt.config, CallCache(rt.config.index.cache_dir))
    chat.collecting = False
    chat.failed = stats.pop("_failed_keys")
    summary = run_index(rt, path, reset=reset, reset_traces=reset_traces, progress=progress, chat=chat)
    rounds = tuple(BatchRound(r["stage"], r["requests"], r["failed"], r["phases"]) for r in stats["rounds"])
    return summary.with_batch(BatchStats(rounds))


def prefill_with_batches(rt: Runtime, path: str | Path, *, reset: bool, progress: bool) -> dict[str, Any]:
    """Answer every request the index of ``path`` needs through batches, stage by stage; returns round stats."""
    cfg = rt.config
    icfg = cfg.index
    loaded = load_documents(path, icfg)
    chunks = chunk_documents(loaded.documents, icfg.chunk_size, icfg.chunk_overlap, cfg.tokenizer.encoding)
    cache = CallCache(icfg.cache_dir)
    chat = BatchChat(cfg, cache)
    rounds: list[dict[str, Any]] = []
    bars = Bars(progress, label_width=20)

    def settle(stage: str, run_stage: Any) -> Any:
        for _ in range(MAX_ROUNDS_PER_STAGE):
            chat.pending.clear()
            out = run_stage()
            todo = {k: p for k, (_, p) in chat.pending.items()}
            if not todo:
                return out
            phases: dict[str, int] = {}
            for phase, _ in chat.pending.values():
                phases[phase] = phases.get(phase, 0) + 1
            label = f"batch {stage} {len(rounds) + 1}"
            failed = run_round(cfg, stage, todo, cache, bars.tracker(label, len(todo)))
            chat.failed.update(failed)
            rounds.append({"stage": stage, "requests": len(todo), "failed": len(failed), "phases": phases})
        raise LLMUnavailable(f"batch {stage}: still collecting requests after {MAX_ROUNDS_PER_STAGE} rounds")

    with bars:
        extractions = settle("extract", lambda: extract_all(chunks, chat, cfg))

        def summarize() -> Any:
            graph = merge(chunks, extractions)
            summarize_descriptions(graph, chat, cfg)
            return graph

        graph = settle("summarize", summarize)
        previous = _previous(rt) if icfg.stable_communities and not reset else []
        communities = detect_communities(graph, icfg.max_cluster_size, icfg.seed, previous)
        existing = {} if reset else _existing_reports(rt, {c.id for c in communities})
        settle("report", lambda: generate_reports(graph, communities, chat, cfg, existing))
    return {
        "rounds": rounds,
        "requests": sum(r["requests"] for r in rounds),
        "failed": sum(r["failed"] for r in rounds),
        "_failed_keys": dict(chat.failed),
    }


def _previous(rt: Runtime) -> list[Previous]:
    """The stored partition the run will cluster from. A store error stops the run: read as "no partition"
    (a Neo4j outage) it would re-cluster everything and pay for every report again. A database without our
    schema reads as empty, with no error (``refuse_unsyncable`` has read it already)."""
    from driftgraph.index.write import previous_partition

    return previous_partition(rt.store)


def _existing_reports(rt: Runtime, ids: set[str]) -> dict[str, Any]:
    """Reports the run would reuse from the database (unchanged communities): no request for them. A store
    error stops the run, as in ``_previous``."""
    from driftgraph.store.index_state import read_state, stored_reports

    kept = ids & read_state(rt.store)["communities"]
    return {r["id"]: stored_report(r) for r in stored_reports(rt.store, kept)}
