"""On-disk embedding cache shared by every system in the bench (driftgraph, GraphRAG, vector-only).

Vectors are keyed by sha256(model id + text), so one cache serves every table and both virtualenvs,
and a changed model never returns stale vectors. Files live in ``bench/.cache/emb/`` (gitignored).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from bench.paths import CACHE

CACHE_DIR = CACHE / "emb"


def text_key(model_id: str, text: str) -> str:
    return hashlib.sha256(f"{model_id}\0{text}".encode()).hexdigest()


class EmbeddingCache:
    """One ``.npz`` per model: ``keys`` (hex digests) and ``vectors`` (float32, L2-normalised)."""

    def __init__(self, model_id: str, directory: Path = CACHE_DIR) -> None:
        self.model_id = model_id
        self.path = directory / f"{model_id}.npz"
        self._index: dict[str, int] = {}
        self._vectors = np.zeros((0, 0), dtype=np.float32)
        if self.path.is_file():
            with np.load(self.path) as data:
                self._vectors = data["vectors"]
                self._index = {k: i for i, k in enumerate(data["keys"].tolist())}

    def __len__(self) -> int:
        return len(self._index)

    def missing(self, texts: Sequence[str]) -> list[str]:
        seen: set[str] = set()
        out = []
        for t in texts:
            k = text_key(self.model_id, t)
            if k not in self._index and k not in seen:
                seen.add(k)
                out.append(t)
        return out

    def get(self, texts: Sequence[str], embed: Callable[[list[str]], np.ndarray] | None = None) -> np.ndarray:
        """Vectors of ``texts`` in order; the missing ones are computed with ``embed`` and saved."""
        todo = self.missing(texts)
        if todo:
            if embed is None:
                raise KeyError(f"{len(todo)} texts not in {self.path}; run `python -m bench prepare` first")
            self.add(todo, embed(todo))
        return self._vectors[[self._index[text_key(self.model_id, t)] for t in texts]]

    def add(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        keys = [text_key(self.model_id, t) for t in texts]
        vectors = np.asarray(vectors, dtype=np.float32)
        base = self._vectors if len(self._index) else np.zeros((0, vectors.shape[1]), dtype=np.float32)
        start = len(base)
        self._vectors = np.concatenate([base, vectors])
        for i, k in enumerate(keys):
            self._index[k] = start + i
        self.save()

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        keys = np.array(sorted(self._index, key=self._index.__getitem__))
        tmp = self.path.with_suffix(f".tmp{os.getpid()}.npz")
        np.savez(tmp, keys=keys, vectors=self._vectors)
        os.replace(tmp, self.path)
