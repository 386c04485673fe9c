"""The public Python API: ``open_engine()`` returns an ``Engine`` that the CLI, the servers and user code share.

    from driftgraph import open_engine, LocalQuery
    with open_engine() as engine:
        result = engine.query(LocalQuery(question="Who recovered the turbines?", context_only=True))
        print(result.trace.items[0].status, result.retrieval_id)

An Engine owns one ``Runtime`` (config, Neo4j store, embedder, chat factory). ``query(request)`` dispatches
on the request's type and runs on a fresh per-question ledger, so one Engine serves concurrent questions.
``query_local`` / ``query_drift`` / ``query_global`` / ``query_basic`` are one-line wrappers.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from driftgraph.config import Config, load_config
from driftgraph.deadline import Deadline
from driftgraph.errors import EntryError, LLMError, QuestionStopped, RequestError, StoreError
from driftgraph.query.history import load_history
from driftgraph.query.requests import BasicQuery, DriftQuery, GlobalQuery, LocalQuery, QueryRequest
from driftgraph.runtime import Runtime

if TYPE_CHECKING:
    import numpy as np

    from driftgraph.adopt.summary import AdoptSummary
    from driftgraph.doctor import DoctorReport
    from driftgraph.importers.summary import ExportSummary, ImportSummary
    from driftgraph.index.documents import Source
    from driftgraph.index.pipeline import WriteGate
    from driftgraph.index.progress import StageListener
    from driftgraph.index.summary import DocumentChange, DocumentInfo, IndexSummary
    from driftgraph.llm.embedder import Embedder
    from driftgraph.query.drift.result import DriftResult
    from driftgraph.query.global_.result import GlobalResult
    from driftgraph.query.result import BasicResult, LocalResult, SearchResult
    from driftgraph.store.db import Store

__all__ = ["Documents", "Engine", "load_history", "open_engine", "parse_age"]

TokenSink = Callable[[str], None]
EventSink = Callable[[str, dict[str, Any]], None]


class Engine:
    """Holds one Runtime; opens the database, embedder and chat client on first use."""

    def __init__(self, config: Config | Runtime) -> None:
        self.runtime = config if isinstance(config, Runtime) else Runtime(config)

    # -- parts ---------------------------------------------------------------------------------------
    @property
    def config(self) -> Config:
        return self.runtime.config

    @property
    def store(self) -> Store:
        return self.runtime.store

    @property
    def embedder(self) -> Embedder:
        return self.runtime.embedder

    def close(self) -> None:
        self.runtime.close()

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- questions -----------------------------------------------------------------------------------
    def query(
        self,
        request: QueryRequest,
        *,
        on_token: TokenSink | None = None,
        on_event: EventSink | None = None,
        deadline: Deadline | None = None,
    ) -> SearchResult:
        """Answer one request in its mode; ``on_token`` streams the answer, ``on_event`` DRIFT's progress.

        An ``LLMError`` (endpoint refused or down) leaves after the question is stored with ``stop_reason:
        error`` (``query/finish.py``); the error's ``retrieval_id`` names it. ``deadline`` (default: the
        request's ``timeout_s``, if any) stops the question from outside or at its limit: ``QuestionStopped``
        leaves the same way, stored with ``stop_reason`` ``deadline`` or ``cancelled`` and the cost so far. The
        schema check runs on this Engine's first question only (``Runtime.check_schema``), counted in that
        question's round trips."""
        rt = self.runtime.for_run(deadline or Deadline(request.timeout_s))
        rt.check_schema()
        try:
            return self._dispatch(rt, request, on_token, on_event)
        except (LLMError, QuestionStopped) as err:
            from driftgraph.query.finish import store_failed

            store_failed(rt, request, err)
            raise
        except EntryError:  # the index's vector or fulltext indexes are gone
            rt.forget_schema()
            raise
        except StoreError as err:  # "no such index": tell a populating index from a missing one
            from driftgraph.store.online import explain_index_error
            from driftgraph.store.schema import FULLTEXT_INDEXES, VECTOR_INDEXES

            rt.forget_schema()  # the database changed under this Engine: the next question checks it again

            better = explain_index_error(rt.store, err, (*VECTOR_INDEXES, *FULLTEXT_INDEXES))
            if better is err:
                raise
            raise better from err

    def _dispatch(
        self, rt: Runtime, request: QueryRequest, on_token: TokenSink | None, on_event: EventSink | None
    ) -> SearchResult:
        if isinstance(request, LocalQuery):
            from driftgraph.query.local.search import local_search

            return local_search(rt, request, on_token=on_token)
        if isinstance(request, DriftQuery):
            from driftgraph.query.drift.search import drift_search

            return drift_search(rt, request, on_token=on_token, on_event=on_event)
        if isinstance(request, GlobalQuery):
            from driftgraph.query.global_.search import global_search

            return global_search(rt, request, on_token=on_token)
        if isinstance(request, BasicQuery):
            from driftgraph.query.basic.search import basic_search

            return basic_search(rt, request, on_token=on_token)
        raise RequestError(f"not a query request: {type(request).__name__}", "request")

    def query_local(self, question: str, *, on_token: TokenSink | None = None, **fields: Any) -> LocalResult:
        """Local search; ``fields`` are ``LocalQuery``'s (context_only, budget, history, exclude, route ...)."""
        return self.query(LocalQuery(question=question, **fields), on_token=on_token)  # type: ignore[return-value]

    def query_drift(
        self, question: str, *, on_token: TokenSink | None = None, on_event: EventSink | None = None, **fields: Any
    ) -> DriftResult:
        """DRIFT search; ``fields`` are ``DriftQuery``'s (seed, reduce, max_llm_calls, max_depth ...)."""
        return self.query(DriftQuery(question=question, **fields), on_token=on_token, on_event=on_event)  # type: ignore[return-value]

    def query_global(self, question: str, *, on_token: TokenSink | None = None, **fields: Any) -> GlobalResult:
        """Global search; ``fields`` are ``GlobalQuery``'s (level, dynamic, budget, seed ...)."""
        return self.query(GlobalQuery(question=question, **fields), on_token=on_token)  # type: ignore[return-value]

    def query_basic(self, question: str, *, on_token: TokenSink | None = None, **fields: Any) -> BasicResult:
        """Basic search; ``fields`` are ``BasicQuery``'s (context_only, budget ...)."""
        return self.query(BasicQuery(question=question, **fields), on_token=on_token)  # type: ignore[return-value]

    def embed(self, texts: list[str]) -> np.ndarray:
        """The configured embedder's L2-normalised vectors (benchmarks use this so all systems match)."""
        return self.runtime.embedder.embed(texts)

    # -- stored retrievals -----------------------------------------------------------------------------
    def retrieval(self, retrieval_id: str) -> dict[str, Any]:
        """A stored retrieval: its properties (JSON decoded: params, cost, trace) and INCLUDED/DROPPED edges."""
        from driftgraph.store.traces import read_retrieval

        return read_retrieval(self.store, retrieval_id)

    def retrievals(self, limit: int = 20) -> list[dict[str, Any]]:
        """The most recent retrievals, newest first."""
        from driftgraph.store.traces import list_retrievals

        return list_retrievals(self.store, limit)

    def retrieval_cypher(self, retrieval_id: str) -> str:
        """The Cypher that draws a stored retrieval in Neo4j Browser (fails on an unknown id)."""
        from driftgraph.store.traces import browser_cypher

        self.retrieval(retrieval_id)
        return browser_cypher(retrieval_id)

    def retrieval_page(self, retrieval_id: str) -> str:
        """A stored retrieval as one self-contained HTML page (driftgraph/view; fails on an unknown id)."""
        from driftgraph.view import fetch_subgraph, render_page

        data = self.retrieval(retrieval_id)
        return render_page(data, fetch_subgraph(self.store, retrieval_id))

    def prune_retrievals(self, older_than: timedelta, *, dry_run: bool = False) -> int:
        """Delete retrievals (and DRIFT steps) older than ``older_than``; returns how many (would be) deleted."""
        from driftgraph.store.traces import prune_retrievals

        return prune_retrievals(self.store, older_than, dry_run=dry_run)

    # -- building the index ----------------------------------------------------------------------------
    def ensure_schema(self) -> None:
        self.runtime.ensure_schema()

    def check_schema(self) -> None:
        """Refuse to query a database built with another embedder or dimension."""
        self.runtime.check_schema()

    def index(
        self,
        path: str | Path,
        *,
        reset: bool = False,
        reset_traces: bool = False,
        progress: bool = False,
        batch: bool = False,
    ) -> IndexSummary:
        """Build or update the index from the documents under ``path`` (README "Indexing documents");
        ``reset`` replaces the database's index (needed over an imported index), deleting it only once the
        extraction has succeeded, and keeps stored retrievals unless ``reset_traces``; ``batch`` sends every
        chat call through the provider's Batch API (README "Batch API"). Returns the summary (``to_dict()``:
        the ``index --json`` document)."""
        if batch:
            from driftgraph.index.batch import index_with_batches

            return index_with_batches(self.runtime, path, reset=reset, reset_traces=reset_traces, progress=progress)
        from driftgraph.index.pipeline import run_index

        return run_index(self.runtime, path, reset=reset, reset_traces=reset_traces, progress=progress)

    @property
    def documents(self) -> Documents:
        """Add, replace, delete, list and get documents one at a time (README "Documents one at a time")."""
        return Documents(self.runtime)

    def estimate_index(self, path: str | Path, *, batch: bool = False) -> dict[str, Any]:
        """Calls, tokens and price per stage of indexing ``path``, with no chat call (``index --estimate``);
        ``batch`` prices it at the Batch API's rate."""
        from driftgraph.index.estimate import estimate_index

        return estimate_index(self.config, path, batch=batch)

    def import_graphrag(
        self,
        path: str | Path,
        *,
        reset: bool = False,
        embed: bool | None = None,
        batch_size: int | None = None,
        progress: Any = None,
    ) -> ImportSummary:
        """Load a GraphRAG output folder (ids kept); ``embed``/``batch_size`` default to the ``import`` section."""
        from driftgraph.importers.load import run_import

        return run_import(self.runtime, path, reset=reset, embed=embed, batch_size=batch_size, progress=progress)

    def adopt(self, *, source: str = "auto") -> AdoptSummary:
        """Fill driftgraph's model next to a graph neo4j-graphrag or LLM Graph Builder built (README "Adopting a
        graph another tool built"); ``source``: auto, neo4j-graphrag or llm-graph-builder. Returns the summary."""
        from driftgraph.adopt.run import run_adopt

        return run_adopt(self.runtime, source)

    def export_graphrag(self, out: str | Path, *, progress: Any = None) -> ExportSummary:
        """Write the graph back as GraphRAG parquet tables; returns rows written per table."""
        from driftgraph.importers.export import run_export

        return run_export(self.runtime, out, progress=progress)

    def doctor(self) -> DoctorReport:
        """Each part checked on its own: Neo4j, schema, embedder, tokenizer, LLM endpoint."""
        from driftgraph.doctor import run_checks

        return run_checks(self.runtime)


class Documents:
    """``engine.documents``: each change brings the index to the stored documents plus that change, as ``index``
    does for a folder (index/documents.py), and returns what it did (``to_dict()``: the CLI's ``--json``).
    ``progress`` shows bars on stderr; ``on_stage(stage, done, total)`` hears each stage move; ``writing()`` is
    held around the change's writes, after its last model call (serve's jobs pass their question gate)."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime

    def add(
        self,
        source: Source | None = None,
        *,
        text: str | None = None,
        title: str | None = None,
        id: str | None = None,
        metadata: dict[str, Any] | None = None,
        progress: bool = False,
        on_stage: StageListener | None = None,
        writing: WriteGate | None = None,
    ) -> DocumentChange:
        """Add a file or folder (path), an upload ``(name, bytes)`` or ``text``; ``id`` defaults to the sha256 of
        the text, and text already stored under its id is a no-op."""
        from driftgraph.index.documents import add_documents

        return add_documents(
            self.runtime,
            source,
            text=text,
            title=title,
            doc_id=id,
            metadata=metadata,
            progress=progress,
            on_stage=on_stage,
            writing=writing,
        )

    def replace(
        self,
        id: str,
        source: Source | None = None,
        *,
        text: str | None = None,
        title: str | None = None,
        metadata: dict[str, Any] | None = None,
        progress: bool = False,
        on_stage: StageListener | None = None,
        writing: WriteGate | None = None,
    ) -> DocumentChange:
        """Replace document ``id`` (it keeps its id) by a file, an upload or ``text``."""
        from driftgraph.index.documents import replace_document

        return replace_document(
            self.runtime,
            id,
            source,
            text=text,
            title=title,
            metadata=metadata,
            progress=progress,
            on_stage=on_stage,
            writing=writing,
        )

    def delete(
        self,
        *ids: str,
        progress: bool = False,
        on_stage: StageListener | None = None,
        writing: WriteGate | None = None,
    ) -> DocumentChange:
        """Delete documents and everything only they contributed."""
        from driftgraph.index.documents import delete_documents

        return delete_documents(self.runtime, ids, progress=progress, on_stage=on_stage, writing=writing)

    def list(self) -> list[DocumentInfo]:
        from driftgraph.index.documents import list_documents

        return list_documents(self.runtime.store)

    def get(self, id: str) -> DocumentInfo:
        """One document with its text; ``DocumentNotFound`` when no document has that id."""
        from driftgraph.index.documents import get_document

        return get_document(self.runtime.store, id)


def parse_age(text: str) -> timedelta:
    """``30d``, ``12h``, ``90m``, ``2w``, ``45s`` -> timedelta (``--older-than``)."""
    from driftgraph.query.requests import parse_age as _parse

    return _parse(text)


def open_engine(config: Config | str | Path | None = None) -> Engine:
    """An engine from a Config, a path to driftgraph.yaml, or (None) ./driftgraph.yaml plus the environment."""
    if not isinstance(config, Config):
        config = load_config(config)
    return Engine(config)
