"""Open a driftgraph engine for the bench: a given Neo4j, the default local embedder served from the cache."""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np

from bench.embcache import EmbeddingCache


class CachedEmbedder:
    """driftgraph's ``Embedder`` protocol over the shared cache; misses go to the real LocalEmbedder."""

    def __init__(self, live) -> None:
        self._live = live
        self.model_id = live.model_id
        self.dimensions = live.dimensions
        self.cache = EmbeddingCache(live.model_id)
        self.misses = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        def live(todo: list[str]) -> np.ndarray:
            self.misses += len(todo)
            return self._live.embed(todo)

        return self.cache.get(list(texts), live)


def config(uri: str, password: str | None = None, extra: dict | None = None):
    from driftgraph.config import parse_config

    data = {
        "neo4j": {"uri": uri, "password": password or os.environ.get("NEO4J_PASSWORD", "driftgraph-bench")},
        **(extra or {}),
    }
    return parse_config(data, "bench")


def engine(uri: str, password: str | None = None, cached: bool = True, extra: dict | None = None):
    """An Engine whose embedder reads the shared cache (so no system pays for embedding twice)."""
    from driftgraph.api import open_engine

    eng = open_engine(config(uri, password, extra))
    if cached:
        eng.embedder = CachedEmbedder(eng.embedder)  # cached_property: the instance attribute wins
    return eng
