"""Open a driftgraph engine for the bench: a given Neo4j, the default local embedder served from the cache."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from bench import metrics
from bench.run import data
from bench.run.embcache import EmbeddingCache


class CachedEmbedder:
    """driftgraph's ``Embedder`` protocol over the shared cache; a miss loads the real LocalEmbedder then.

    Lazy, so a query process that is handed its vectors never loads the ONNX model (fair client RSS).
    """

    def __init__(self, cfg) -> None:
        from driftgraph.llm.embedder import LOCAL_DIMENSIONS, LOCAL_MODEL_ID

        self._cfg = cfg
        self._live = None
        self.model_id = LOCAL_MODEL_ID
        self.dimensions = LOCAL_DIMENSIONS
        self._cache: EmbeddingCache | None = None
        self.misses = 0

    @property
    def cache(self) -> EmbeddingCache:
        if self._cache is None:
            self._cache = EmbeddingCache(self.model_id)
        return self._cache

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        def live(todo: list[str]) -> np.ndarray:
            if self._live is None:
                from driftgraph.llm.embedder import LocalEmbedder

                self._live = LocalEmbedder(self._cfg)
            self.misses += len(todo)
            return self._live.embed(todo)

        return self.cache.get(list(texts), live)


def musique_args(ap: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The options of a worker that measures one system at several budgets on a question set."""
    ap.add_argument("--uri", required=True)
    ap.add_argument("--root", type=Path, default=data.MUSIQUE)
    ap.add_argument("--questions", type=Path, default=None)
    ap.add_argument("--budgets", default="2000,4000,8000,12000")
    return ap


def config(uri: str, password: str | None = None, extra: dict | None = None):
    from driftgraph.config import parse_config

    data = {
        "neo4j": {"uri": uri, "password": password or os.environ.get("NEO4J_PASSWORD", "driftgraph-bench")},
        **(extra or {}),
    }
    return parse_config(data, "bench")


def engine(uri: str, password: str | None = None, cached: bool = True, extra: dict | None = None, embedder=None):
    """An Engine whose embedder reads the shared cache (so no system pays for embedding twice), or ``embedder``."""
    from driftgraph.api import Engine
    from driftgraph.runtime import Runtime

    cfg = config(uri, password, extra)
    if embedder is None and cached:
        embedder = CachedEmbedder(cfg.embeddings)
    return Engine(Runtime(cfg, embedder=embedder))


def local_recall(
    uri: str,
    overrides: dict,
    questions: Sequence,
    qvec: dict,
    units: dict,
    budgets: Sequence[int],
    ranked: dict[str, list[str]] | None = None,
):
    """Evidence recall of context-only local search with these ``local`` overrides, per budget (as a string
    key) and question, the question vectors handed in; the engine is opened and closed here. ``ranked``, if
    given, receives each question's chunk ids in rank order (the ranking does not depend on the budget; taken
    at the first one), for R@k."""
    from driftgraph.query.local.search import LocalAsk, build_local_context

    eng = engine(uri, extra={"local": overrides})
    out: dict[str, list[float]] = {str(b): [] for b in budgets}
    try:
        for b in budgets:
            for q in questions:
                ctx = build_local_context(
                    eng.runtime.for_run(), LocalAsk(q.question, budget=b, query_vector=qvec[q.id]), eng.config.local
                )
                out[str(b)].append(metrics.evidence_recall(ctx.text, [units.get(g, "") for g in q.gold]))
                if ranked is not None and b == budgets[0]:
                    chunks = [i for i in ctx.recorder.items if i.source == "chunk" and i.rank]
                    ranked[q.id] = [i.id for i in sorted(chunks, key=lambda i: i.rank)]
        return out
    finally:
        eng.close()
