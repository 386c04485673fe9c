"""The embedder of a synthetic index (bench/run/synth.py): it answers with the vectors the generator shipped.

Why: the generator's vectors are random unit vectors, so the importer's provenance check (a sample of the
shipped vectors must match what the configured embedder computes for the same texts) would reject them and
re-embed everything live; the scale bench would then time the embedding model, not the bulk import. For a
real GraphRAG index built with the configured model that check passes; this makes it pass the same way here:
``embed`` looks each text up in the synthetic tables and returns the vector shipped for that node. The
importer's calibration probes (``driftgraph/store/calibration.py``) are off-topic questions by design: they get
random unit vectors seeded by their text, as unrelated to the index as the generator's own vectors are.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

import numpy as np


class SynthEmbedder:
    """``Embedder`` protocol over a synthetic folder; a text that is not one of its nodes' texts is an error."""

    def __init__(self, folder: Path, model_id: str, dimensions: int) -> None:
        self.folder = folder
        self.model_id = model_id
        self.dimensions = dimensions

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        from driftgraph.store.calibration import PROBES

        found: dict[str, np.ndarray] = {t: self._probe(t) for t in texts if t in PROBES}
        for lookup in (self._entities, self._chunks, self._reports):
            todo = [t for t in dict.fromkeys(texts) if t not in found]
            if todo:
                found.update(lookup(todo))
        missing = [t for t in texts if t not in found]
        if missing:
            raise KeyError(f"{len(missing)} texts are not texts of {self.folder.name}, e.g. {missing[0][:60]!r}")
        return np.stack([found[t] for t in texts]).astype(np.float32)

    def _probe(self, text: str) -> np.ndarray:
        seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
        v = np.random.default_rng(seed).standard_normal(self.dimensions)
        return v / np.linalg.norm(v)

    def _match(self, table: str, text_expr, id_col: str, vectors: str, texts: list[str]) -> dict[str, np.ndarray]:
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.parquet as pq

        t = pq.read_table(self.folder / table)
        text = text_expr(t)
        hit = pc.is_in(text, value_set=pa.array(texts, text.type))
        sel = t.filter(hit)
        by_id = dict(zip(sel.column(id_col).to_pylist(), pc.filter(text, hit).to_pylist(), strict=True))
        if not by_id:
            return {}
        v = pq.read_table(self.folder / vectors)
        v = v.filter(pc.is_in(v.column("id"), value_set=pa.array(list(by_id), v.column("id").type)))
        return {
            by_id[i]: np.asarray(e, dtype=np.float32)
            for i, e in zip(v.column("id").to_pylist(), v.column("embedding").to_pylist(), strict=True)
        }

    def _entities(self, texts: list[str]) -> dict[str, np.ndarray]:
        import pyarrow as pa
        import pyarrow.compute as pc

        def text(t):  # as cypher/ingest/pending_entity.cypher: title + ':' + description
            title = t.column("title")
            sep = pa.scalar(":", title.type)
            return pc.binary_join_element_wise(title, pc.fill_null(t.column("description"), ""), sep)

        return self._match("entities.parquet", text, "id", "embeddings.entity_description.parquet", texts)

    def _chunks(self, texts: list[str]) -> dict[str, np.ndarray]:
        vectors = "embeddings.text_unit_text.parquet"
        return self._match("text_units.parquet", lambda t: t.column("text"), "id", vectors, texts)

    def _reports(self, texts: list[str]) -> dict[str, np.ndarray]:
        vectors = "embeddings.community_full_content.parquet"
        return self._match("community_reports.parquet", lambda t: t.column("full_content"), "id", vectors, texts)
