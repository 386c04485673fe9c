"""``driftgraph index DIR`` end to end: load, chunk, extract, merge, cluster, report, then write and embed.

Every LLM call goes through the on-disk cache (``index.cache_dir``), so a re-run or a run resumed after a
crash pays only for work not done yet; there is no ``--resume`` flag because resuming is the default. A
run compares its documents with the database: removed or changed documents lose what they contributed,
communities the change does not touch keep their members, ids and reports (index/partition.py), and the
summary says what was re-done.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

from driftgraph.errors import InputError, LLMError
from driftgraph.index.chunk import chunk_documents
from driftgraph.index.communities import detect_communities
from driftgraph.index.extract import ChunkExtraction, extract_all
from driftgraph.index.keep import keep_failed
from driftgraph.index.load import Document, load_documents
from driftgraph.index.merge import merge, summarize_descriptions
from driftgraph.index.progress import Bars, StageListener
from driftgraph.index.reports import generate_reports
from driftgraph.index.summary import (
    ChunkFailure,
    CommunityChanges,
    DocumentCounts,
    IndexFailures,
    IndexSummary,
    LoadSummary,
    Redone,
    ReportFailure,
    TokenCount,
)
from driftgraph.index.write import Writer, previous_partition, stored_report, sync_communities, sync_graph
from driftgraph.llm.cache import CallCache
from driftgraph.llm.chat import ChatClient
from driftgraph.llm.ledger import Ledger
from driftgraph.llm.tokenizer import count_tokens
from driftgraph.store import ingest
from driftgraph.store.calibration import calibrate
from driftgraph.store.foreign import refuse_foreign
from driftgraph.store.index_state import read_state, stored_reports
from driftgraph.store.lock import writer_lock
from driftgraph.store.schema import ensure_schema, mark_filled_by, read_meta
from driftgraph.store.synonyms import link_synonyms

if TYPE_CHECKING:
    from driftgraph.llm.embedder import Embedder
    from driftgraph.runtime import Runtime
    from driftgraph.store.db import Store

EXTRACT_PHASES = ("extract", "extract_gleaning", "extract_claims")
WriteGate = Callable[[], AbstractContextManager[object]]  # held while a change is written (sync_corpus)


def run_index(
    rt: Runtime,
    path: str | Path,
    *,
    reset: bool = False,
    reset_traces: bool = False,
    progress: bool = True,
    chat: ChatClient | None = None,
) -> IndexSummary:
    """Index ``path`` into the database; returns its summary (``to_dict()`` is the ``--json`` document).
    ``chat`` replaces the endpoint client (``index --batch`` hands one that only reads the cache its batches
    filled). ``reset`` empties the index only once the extraction has succeeded (a dead endpoint or a run
    in which no chunk could be extracted leaves the database as it was); stored retrievals are kept unless
    ``reset_traces``."""
    start = time.perf_counter()
    loaded = load_documents(path, rt.config.index)
    if not loaded.documents:
        skipped = "; ".join(f"{s['path']}: {s['reason']}" for s in loaded.skipped[:5])
        raise InputError(f"no documents to index in {path}" + (f" (skipped: {skipped})" if skipped else ""))
    return sync_corpus(
        rt,
        loaded.documents,
        input=str(path),
        load=LoadSummary.from_dict(loaded.summary()),
        reset=reset,
        reset_traces=reset_traces,
        progress=progress,
        chat=chat,
        load_seconds=time.perf_counter() - start,
    )


def sync_corpus(
    rt: Runtime,
    docs: Sequence[Document],
    *,
    input: str,
    load: LoadSummary,
    reset: bool = False,
    reset_traces: bool = False,
    progress: bool = True,
    chat: ChatClient | None = None,
    load_seconds: float = 0.0,
    check_foreign: bool = True,
    on_stage: StageListener | None = None,
    writing: WriteGate | None = None,
) -> IndexSummary:
    """Make the database's index hold exactly ``docs``: what ``index`` does after reading its folder, and what
    the document API (index/documents.py) does with the stored documents plus one change. ``docs`` may be
    empty (the last document deleted): everything is then removed. ``check_foreign`` is False only for a
    caller that ran its own check of an imported index; ``on_stage`` hears each stage's progress (serve's jobs).

    Every model call (extraction, summaries, reports) comes before the first write of the change, so the
    graph stays as it was for all but the last seconds of a run; ``writing()``, when given, is held around
    those seconds (serve's jobs pass their gate, serve/gate.py: no question reads half a change)."""
    cfg, store, embedder = rt.config, rt.store, rt.embedder
    seconds: dict[str, float] = {"load": round(load_seconds, 3)}
    start_all = time.perf_counter() - load_seconds

    @contextmanager
    def stage(name: str) -> Iterator[None]:
        t0 = time.perf_counter()
        yield
        seconds[name] = round(seconds.get(name, 0.0) + time.perf_counter() - t0, 3)

    icfg = cfg.index
    enc = cfg.tokenizer.encoding
    tokens = lambda text: count_tokens(text, enc)  # noqa: E731
    ledger = Ledger()
    # the refusals come before the writer lock, whose node is a write: a refused run changes nothing
    refuse_foreign(store, "index --reset" if reset else "index", reset)
    if not reset and check_foreign:
        _refuse_foreign_index(store)
    what = input if input.startswith("documents ") else f"index {input}"
    with writer_lock(store, what) as lease, Bars(progress, listener=on_stage) as bars:
        bars.done("load", len(docs))
        with stage("chunk"):
            chunks = chunk_documents(docs, icfg.chunk_size, icfg.chunk_overlap, enc)
        bars.done("chunk", len(chunks))
        if chat is None:
            chat = ChatClient(cfg.llm, ledger, CallCache(icfg.cache_dir), enc)  # fails now if no endpoint is configured
        else:
            chat.ledger = ledger
        with stage("schema"):
            if reset:  # nothing is deleted before every model call is done (_reset below)
                state = _empty_state()
                previous = []
            else:
                ensure_schema(store, embedder.model_id, embedder.dimensions, hnsw=cfg.neo4j.vector_index)
                state = read_state(store)
                # read before sync_graph deletes entities and their memberships
                previous = previous_partition(store) if icfg.stable_communities else []
                mark_filled_by(store, "index")
        doc_ids = {d.id for d in docs}
        # a stored id with a chunk the database does not hold: its text changed under the same id
        replaced = {c.document_id for c in chunks if c.id not in state["chunks"]} & doc_ids & state["documents"]
        documents = DocumentCounts(
            total=len(docs),
            added=len(doc_ids - state["documents"]),
            removed=len(state["documents"] - doc_ids),
            unchanged=len(doc_ids & state["documents"]) - len(replaced),
            replaced=len(replaced),
        )
        with stage("extract"):
            extractions = extract_all(chunks, chat, cfg, bars.task("extract", len(chunks)))
        if reset:
            _refuse_empty_reset(extractions)
        with stage("merge"):
            graph = merge(chunks, extractions)
            # a chunk that failed this time keeps what it contributed before (index/keep.py)
            keep_failed(store, graph, chunks, extractions, state["chunks"])
            summaries = summarize_descriptions(graph, chat, cfg, bars.task("summarize", None))
        with stage("communities"):
            communities = detect_communities(graph, icfg.max_cluster_size, icfg.seed, previous)
        bars.done("communities", len(communities))
        with stage("reports"):
            kept = {c.id for c in communities} & state["communities"]
            existing = {r["id"]: stored_report(r) for r in stored_reports(store, kept)}
            reports, report_stats = generate_reports(
                graph, communities, chat, cfg, existing, bars.task("reports", len(communities))
            )
        # every model call is behind us: what is left writes the change, under the caller's gate if any
        with writing() if writing is not None else nullcontext():
            lease.check("writing (the model calls are cached: a re-run pays for none of them again)")
            if reset:
                with stage("schema"):
                    _reset(rt, keep_traces=not reset_traces)
            with stage("write"):
                writer = Writer(store, icfg.write_batch_size, tokens)
                deleted = sync_graph(writer, state, docs, chunks, graph)
                lease.check("writing communities")
                community_sync = sync_communities(writer, state["communities"], communities, reports)
            bars.done("write")
            lease.check("embedding")
            with stage("embed"):
                embedded = _embed(store, embedder, icfg.write_batch_size, bars)
            lease.check("linking synonyms")
            with stage("synonyms"):
                synonyms = link_synonyms(store, embedder.embed, cfg.synonyms, icfg.write_batch_size, bars.counter)
            lease.check("calibrating")
            with stage("indexes"):
                from driftgraph.store.online import await_online

                await_online(store, cfg.neo4j.index_wait_s)  # queries right after `index` find every index ONLINE
                calibrate(store, embedder.embed, embedder.model_id)  # the index's own entry threshold
    cost: dict[str, dict[str, int]] = ledger.to_dict(per_phase=True)
    total = cost["total"]
    extract_cost = [cost[p] for p in EXTRACT_PHASES if p in cost]
    doc_of = {c.id: c.document_id for c in chunks}
    titles = {d.id: d.title for d in docs}
    return IndexSummary(
        input=input,
        documents=documents,
        chunks=len(chunks),
        entities=len(graph.entities),
        relationships=len(graph.relationships),
        claims=len(graph.claims),
        communities=len(communities),
        levels=len({c.level for c in communities}),
        reports=len(reports),
        llm_calls=total["llm_calls"],
        tokens=TokenCount(prompt=total["prompt_tokens"], completion=total["completion_tokens"]),
        cache_hits=total["cache_hits"],
        redone=Redone(
            documents_extracted=len({doc_of[e.chunk_id] for e in extractions if e.llm_calls}),
            chunks_extracted=sum(1 for e in extractions if e.llm_calls),
            extract_llm_calls=sum(c["llm_calls"] for c in extract_cost),
            extract_cache_hits=sum(c["cache_hits"] for c in extract_cost),
            descriptions_summarized=summaries["summarized"],
            communities=CommunityChanges.from_counts(community_sync),
            reports_generated=report_stats["generated"],
            reports_reused=report_stats["reused"],
            reports_outdated=report_stats["outdated"],
            reports_with_substituted_sub_reports=report_stats["substituted"],
            reports_skipped_small=report_stats["skipped_small"],
            deleted=deleted,
            embedded=embedded,
            synonyms=synonyms,
        ),
        failures=IndexFailures(
            chunks=tuple(
                ChunkFailure(e.chunk_id, titles[doc_of[e.chunk_id]], tuple(e.failures))
                for e in extractions
                if e.failures
            ),
            reports=tuple(ReportFailure.from_dict(f) for f in report_stats["failures"]),
            summaries=tuple(summaries["failures"]),
            dropped_records=sum(e.dropped_records for e in extractions),
        ),
        load=load,
        llm=cost,
        seconds={**seconds, "total": round(time.perf_counter() - start_all, 3)},
    )


def _empty_state() -> dict[str, Any]:
    """``read_state`` of an empty database: what a ``--reset`` run syncs against."""
    kinds = ("documents", "chunks", "entities", "claims", "relationships")
    return {
        **{kind: set() for kind in ("documents", "chunks", "entities", "claims", "communities")},
        "relationships": {},
        "numbers": {kind: {} for kind in kinds},
    }


def _refuse_empty_reset(extractions: list[ChunkExtraction]) -> None:
    """``--reset`` when no chunk was extracted (the endpoint answered nothing usable) would leave an empty
    index: stop before anything is deleted."""
    if extractions and all(e.failed for e in extractions):
        first = " ".join((extractions[0].failures or ["no answer"])[0].split())[:200]
        raise LLMError(
            f"index --reset: the extraction failed for every chunk ({len(extractions)}; first: {first}), "
            "so the database was left as it was; fix the endpoint and run again"
        )


def _reset(rt: Runtime, *, keep_traces: bool) -> None:
    """``--reset``, once every model call is done: delete the index and rebuild the schema."""
    store, embedder = rt.store, rt.embedder
    ingest.delete_all(store, keep_traces=keep_traces)
    store.run_auto("admin/drop_schema")
    ensure_schema(store, embedder.model_id, embedder.dimensions, hnsw=rt.config.neo4j.vector_index)
    mark_filled_by(store, "index")


def _embed(store: Store, embedder: Embedder, page_size: int, bars: Bars) -> dict[str, int]:
    """Embed every entity, chunk and report without a vector (new or changed text)."""
    pending = ingest.pending_embedding_counts(store)
    done: dict[str, int] = {}
    for kind in ingest.EMBED_KINDS:
        advance = bars.counter(f"embed {kind}", pending[kind])
        done[kind] = ingest.embed_pending(store, kind, embedder.embed, page_size, advance)
    return done


def refuse_unsyncable(store: Store, *, reset: bool) -> None:
    """What ``index`` refuses before it changes anything, checked by ``--batch`` before it submits anything
    (a refusal after hours of batches, or after paying for them, would waste both)."""
    refuse_foreign(store, "index --batch --reset" if reset else "index --batch", reset)
    if not reset:
        _refuse_foreign_index(store)


def _refuse_foreign_index(store: Store) -> None:
    """`index` syncs the database with one folder: an imported index's documents would count as removed. Only
    the meta node and a count are read (the run reads every stored id once, later, under the writer lock)."""
    meta = read_meta(store)
    if meta is None or meta.filled_by != "import-graphrag":
        return
    documents = int(store.read("admin/counts")[0]["documents"])
    if documents:
        raise InputError(
            f"the database holds an imported GraphRAG index ({documents} documents) that indexing "
            "this folder would delete as removed files: use `driftgraph index DIR --reset` to replace it, "
            "or another database (NEO4J_DATABASE)"
        )
