"""What a query module needs, handed in by ``Engine.query_deps()`` so ``query`` never imports ``api``.

Every mode takes one ``QueryDeps``: the config, the store, the embedder, a chat-client factory and the
ledger that collects the run's cost. Tests and benchmarks can build one directly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from driftgraph.config import Config
from driftgraph.llm.ledger import Ledger

if TYPE_CHECKING:
    import numpy as np

    from driftgraph.llm.chat import ChatClient
    from driftgraph.llm.embedder import Embedder
    from driftgraph.store.db import Store


@dataclass
class QueryDeps:
    """Dependencies of one query run. ``ledger`` is per run: create a fresh one with ``fresh()``."""

    config: Config
    store: Store
    embedder: Embedder
    chat_factory: Callable[[Ledger], ChatClient]
    ledger: Ledger = field(default_factory=Ledger)

    def chat(self) -> ChatClient:
        """A chat client that records into this run's ledger."""
        return self.chat_factory(self.ledger)

    def fresh(self) -> QueryDeps:
        """Same parts, a new empty ledger (one per question, so costs never mix)."""
        return QueryDeps(self.config, self.store, self.embedder, self.chat_factory, Ledger())

    def embed(self, texts: Sequence[str], phase: str = "embed") -> np.ndarray:
        """Embed and record the call in the ledger (the shared embedder has no ledger of its own)."""
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
