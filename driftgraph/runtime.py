"""The Runtime: what every layer below the API needs, handed over one way.

One ``Runtime`` holds the config and opens the Neo4j store and the embedder on first use (so
``driftgraph config show`` never touches Neo4j or ONNX). Query modes, the indexer, the importer and
``doctor`` all take a Runtime; none of them imports ``driftgraph.api``. A query runs on
``runtime.for_run()``: the same embedder, a view of the same store with its own statement counter, and a fresh
cost ledger, so concurrent questions on one Engine never mix their costs or their round trips. Tests and
benchmarks build one directly: ``Runtime(config)``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from driftgraph.config import Config
from driftgraph.deadline import Deadline
from driftgraph.llm.ledger import Ledger

if TYPE_CHECKING:
    import numpy as np

    from driftgraph.llm.chat import ChatClient
    from driftgraph.llm.embedder import Embedder
    from driftgraph.store.db import Store

ChatFactory = Callable[[Ledger, Deadline], "ChatClient"]


class _Parts:
    """The expensive parts shared by every run view of one Runtime, opened lazily and once."""

    def __init__(self, config: Config, store: Store | None, embedder: Embedder | None) -> None:
        self.config = config
        self.store = store
        self.embedder = embedder
        self.lock = threading.Lock()
        self.schema_checked = False  # the database's schema meta matched the embedder once (check_schema)

    def get_store(self) -> Store:
        with self.lock:
            if self.store is None:
                from driftgraph.store.db import Store

                self.store = Store(self.config.neo4j)
            return self.store

    def get_embedder(self) -> Embedder:
        with self.lock:
            if self.embedder is None:
                from driftgraph.llm.embedder import make_embedder

                self.embedder = make_embedder(self.config.embeddings, self.config.llm)
            return self.embedder


def _default_chat(config: Config) -> ChatFactory:
    def make(ledger: Ledger, deadline: Deadline) -> ChatClient:
        from driftgraph.llm.chat import ChatClient

        return ChatClient(config.llm, ledger, encoding=config.tokenizer.encoding, deadline=deadline)

    return make


class Runtime:
    """Config, store, embedder, chat factory and the ledger of the current run."""

    def __init__(
        self,
        config: Config,
        *,
        store: Store | None = None,
        embedder: Embedder | None = None,
        chat_factory: ChatFactory | None = None,
        ledger: Ledger | None = None,
        deadline: Deadline | None = None,
        _parts: _Parts | None = None,
    ) -> None:
        self.config = config
        self._parts = _parts or _Parts(config, store, embedder)
        self.chat_factory = chat_factory or _default_chat(config)
        self.ledger = ledger or Ledger()
        self.deadline = deadline or Deadline()
        self._question = deadline is not None  # a question's run: its statements get neo4j.query_timeout_s
        self._run_store: Store | None = None

    @property
    def store(self) -> Store:
        """A view of the shared store that counts this Runtime's statements (``store.round_trips``): a run's
        trace reports every statement it sent and none of a concurrent question's."""
        if self._run_store is None:
            store = self._parts.get_store()
            self._run_store = (
                store.view(self.deadline, self.config.neo4j.query_timeout_s) if self._question else store.view()
            )
        return self._run_store

    @property
    def embedder(self) -> Embedder:
        return self._parts.get_embedder()

    @property
    def store_opened(self) -> bool:
        return self._parts.store is not None

    def for_run(self, deadline: Deadline | None = None) -> Runtime:
        """Same parts, a new empty ledger and store view: one per question, so costs and round trips never mix.
        The question's ``deadline`` reaches every chat call and statement (``driftgraph/deadline.py``)."""
        return Runtime(self.config, chat_factory=self.chat_factory, deadline=deadline or Deadline(), _parts=self._parts)

    def with_config(self, config: Config) -> Runtime:
        """The same opened parts under another config (benchmarks vary query sections, not Neo4j)."""
        return Runtime(config, chat_factory=_default_chat(config), ledger=self.ledger, _parts=self._parts)

    def chat(self) -> ChatClient:
        """A chat client that records into this run's ledger and stops with this run's deadline."""
        return self.chat_factory(self.ledger, self.deadline)

    def embed(self, texts: Sequence[str], phase: str = "embed") -> np.ndarray:
        """Embed and record the call in this run's ledger (the shared embedder has no ledger of its own)."""
        vectors = self.embedder.embed(list(texts))
        self.ledger.record(phase, embedding_calls=1, embedding_tokens=sum(self.count_tokens(t) for t in texts))
        return vectors

    def count_tokens(self, text: str) -> int:
        from driftgraph.llm.tokenizer import count_tokens

        return count_tokens(text, self.config.tokenizer.encoding)

    def count_many(self, texts: Sequence[str]) -> list[int]:
        """Token counts of many texts (sequential: on a busy 2-core machine threads cost more than they save)."""
        from driftgraph.llm.tokenizer import get_tokenizer

        tok = get_tokenizer(self.config.tokenizer.encoding)
        encode = getattr(tok, "encode_ordinary", None)
        if encode is None:
            return [self.count_tokens(t) for t in texts]
        return [len(encode(t)) for t in texts]

    def ensure_schema(self) -> None:
        """Create constraints and indexes for the configured embedder (idempotent)."""
        from driftgraph.store.schema import ensure_schema

        self._parts.schema_checked = False  # this process changed the schema: the next question checks again
        ensure_schema(self.store, self.embedder.model_id, self.embedder.dimensions, hnsw=self.config.neo4j.vector_index)

    def check_schema(self) -> None:
        """Refuse to query a database built with another embedder or dimension. Once per Runtime (one Engine):
        ``ensure_schema`` and ``forget_schema`` (a query that met a missing index) make the next call check again."""
        if self._parts.schema_checked:
            return
        from driftgraph.store.schema import check_meta

        check_meta(self.store, self.embedder.model_id, self.embedder.dimensions)
        self._parts.schema_checked = True

    def forget_schema(self) -> None:
        """The database may have changed under us (an index went missing): check the schema again next time."""
        self._parts.schema_checked = False

    def close(self) -> None:
        self._run_store = None
        if self._parts.store is not None:
            self._parts.store.close()
            self._parts.store = None
