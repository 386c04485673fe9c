"""Fill the embedding cache for a data set once, with driftgraph's own embedder (public API)."""

from __future__ import annotations

import time
from pathlib import Path

from bench.run import data
from bench.run.embcache import EmbeddingCache


def local_engine():
    """A driftgraph engine with the default (offline, local) embedder; no Neo4j is touched."""
    from driftgraph.api import open_engine
    from driftgraph.config import parse_config

    return open_engine(parse_config({}, "bench"))


def all_texts(root: Path) -> list[str]:
    texts = list(data.text_units(root).values()) + list(data.entity_texts(root).values())
    texts += list(data.entity_titles(root).values())
    texts += list(data.report_texts(root).values())
    if (root / "questions_dev.jsonl").is_file():
        texts += [q.question for q in data.questions(root / "questions_dev.jsonl")]
    return texts


def fill(root: Path, step: int = 1024, log=print) -> EmbeddingCache:
    engine = local_engine()
    cache = EmbeddingCache(engine.embedder.model_id)
    todo = cache.missing(all_texts(root))
    t0 = time.perf_counter()
    for start in range(0, len(todo), step):
        batch = todo[start : start + step]
        cache.add(batch, engine.embed(batch))
        done = start + len(batch)
        rate = done / (time.perf_counter() - t0)
        log(f"  embedded {done}/{len(todo)} texts of {root.name} ({rate:.0f}/s)")
    return cache
