"""The public Python API: ``open_engine()`` returns an ``Engine`` that the CLI and user code share.

from driftgraph.api import open_engine
with open_engine() as engine:
    vectors = engine.embed(["a question"])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from driftgraph.config import Config, load_config
from driftgraph.llm.ledger import Ledger

if TYPE_CHECKING:
    import numpy as np

    from driftgraph.llm.chat import ChatClient
    from driftgraph.llm.embedder import Embedder
    from driftgraph.query.result import SearchResult
    from driftgraph.runtime import QueryDeps
    from driftgraph.store.db import Store


class Engine:
    """Holds the config and opens the database, embedder and chat client on first use."""

    def __init__(self, config: Config) -> None:
        self.config = config

    # -- parts, opened lazily so `driftgraph config show` never touches Neo4j or ONNX ---------------
    @cached_property
    def store(self) -> Store:
        from driftgraph.store.db import Store

        return Store(self.config.neo4j)

    @cached_property
    def embedder(self) -> Embedder:
        from driftgraph.llm.embedder import make_embedder

        return make_embedder(self.config.embeddings, self.config.llm)

    def chat(self, ledger: Ledger) -> ChatClient:
        from driftgraph.llm.chat import ChatClient

        return ChatClient(self.config.llm, ledger)

    def query_deps(self, ledger: Ledger | None = None) -> QueryDeps:
        """What query modules receive instead of the Engine (``query`` never imports ``api``)."""
        from driftgraph.runtime import QueryDeps

        return QueryDeps(self.config, self.store, self.embedder, self.chat, ledger or Ledger())

    def close(self) -> None:
        if "store" in self.__dict__:
            self.store.close()

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- operations ----------------------------------------------------------------------------------
    def embed(self, texts: list[str]) -> np.ndarray:
        """The configured embedder's L2-normalised vectors (benchmarks use this so all systems match)."""
        return self.embedder.embed(texts)

    def query_local(
        self,
        question: str,
        *,
        context_only: bool = False,
        budget: int | None = None,
        history: Sequence[dict[str, str]] | None = None,
        exclude: Sequence[str] = (),
        route: str | None = None,
        on_token: Callable[[str], None] | None = None,
    ) -> SearchResult:
        """Local search (DESIGN §4) with the ``local`` config section; the trace is stored unless disabled."""
        from driftgraph.query.local.search import local_search

        self.check_schema()
        return local_search(
            self.query_deps(),
            question,
            self.config.local,
            budget=budget,
            history=history,
            exclude=exclude,
            route=route,
            context_only=context_only,
            on_token=on_token,
        )

    def index(self, path: str | Path, *, reset: bool = False, progress: bool = False) -> dict[str, Any]:
        """Build or update the index from the documents under ``path`` (DESIGN §6); ``reset`` empties the
        database first (needed over an imported index). Returns the summary."""
        from driftgraph.index.pipeline import run_index

        return run_index(self.config, self.store, self.embedder, path, reset=reset, progress=progress)

    def query_global(
        self,
        question: str,
        *,
        level: int | None = None,
        dynamic: bool | None = None,
        budget: int | None = None,
        seed: int | None = None,
        on_token: Callable[[str], None] | None = None,
    ) -> SearchResult:
        """Global search over community reports (map in batches, reduce); ``level``/``dynamic`` override config."""
        from driftgraph.query.global_.search import global_search

        self.check_schema()
        return global_search(
            self.query_deps(),
            question,
            self.config.global_,
            level=level,
            dynamic=dynamic,
            budget=budget,
            seed=seed,
            on_token=on_token,
        )

    def query_basic(
        self,
        question: str,
        *,
        context_only: bool = False,
        budget: int | None = None,
        on_token: Callable[[str], None] | None = None,
    ) -> SearchResult:
        """Basic search, the baseline: nearest chunks until the budget is full, then one answer call."""
        from driftgraph.query.basic.search import basic_search

        self.check_schema()
        return basic_search(
            self.query_deps(), question, self.config.basic, budget=budget, context_only=context_only, on_token=on_token
        )

    def query_drift(
        self,
        question: str,
        *,
        seed: int | None = None,
        reduce: bool | None = None,
        max_llm_calls: int | None = None,
        max_depth: int | None = None,
        on_token: Callable[[str], None] | None = None,
        on_event: Callable[[str, dict[str, Any]], None] | None = None,
    ) -> SearchResult:
        """DRIFT search (DESIGN §5); the keyword arguments override the ``drift`` section for this question."""
        from driftgraph.query.drift.search import drift_search, drift_settings

        self.check_schema()
        cfg = drift_settings(self.config.drift, reduce=reduce, max_llm_calls=max_llm_calls, max_depth=max_depth)
        return drift_search(self.query_deps(), question, cfg, seed=seed, on_token=on_token, on_event=on_event)

    def ensure_schema(self) -> None:
        from driftgraph.store.schema import ensure_schema

        ensure_schema(self.store, self.embedder.model_id, self.embedder.dimensions)

    def check_schema(self) -> None:
        """Refuse to query a database built with another embedder or dimension."""
        from driftgraph.store.schema import check_meta

        check_meta(self.store, self.embedder.model_id, self.embedder.dimensions)

    def doctor(self) -> dict[str, Any]:
        from driftgraph.doctor import run_checks

        return run_checks(self)

    def import_graphrag(
        self,
        path: str | Path,
        *,
        reset: bool = False,
        embed: bool | None = None,
        batch_size: int | None = None,
        progress: Any = None,
    ) -> dict[str, Any]:
        """Load a GraphRAG output folder (ids kept); ``embed``/``batch_size`` default to the ``import`` section."""
        from driftgraph.importers.load import run_import

        return run_import(self, path, reset=reset, embed=embed, batch_size=batch_size, progress=progress)

    def export_graphrag(self, out: str | Path, *, progress: Any = None) -> dict[str, Any]:
        """Write the graph back as GraphRAG parquet tables; returns rows written per table."""
        from driftgraph.importers.export import run_export

        return run_export(self.store, out, self.config.import_.batch_size, progress=progress)


def open_engine(config: Config | str | Path | None = None) -> Engine:
    """An engine from a Config, a path to driftgraph.yaml, or (None) ./driftgraph.yaml plus the environment."""
    if not isinstance(config, Config):
        config = load_config(config)
    return Engine(config)
