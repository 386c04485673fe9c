"""Load a GraphRAG parquet index the way graphrag 3.2.0's query API does, with our shared embedder.

Mirrors ``graphrag.api.query.local_search_streaming`` + ``graphrag.query.factory.get_local_search_engine``:
the ``read_indexer_*`` adapters at the CLI's default community level (2), an entity-description
LanceDB store (``title:description`` vectors) in a temp folder, the config-layer defaults of
``LocalSearchConfig()``, and cl100k token counting.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bench.run.embcache import EmbeddingCache

COMMUNITY_LEVEL = 2  # `graphrag query --community-level` default
ENCODING = "cl100k_base"


class _Result:
    def __init__(self, vectors: list[list[float]]) -> None:
        self.embeddings = vectors
        self.first_embedding = vectors[0] if vectors else []


class CachedEmbedder:
    """Duck-types graphrag's ``LLMEmbedding`` (``embedding(input=[...]).first_embedding``).

    Vectors come from the shared cache (filled with driftgraph's LocalEmbedder); a miss is embedded live
    with that same embedder, so the baseline and driftgraph see identical vectors.
    """

    def __init__(self, cache: EmbeddingCache) -> None:
        self.cache = cache
        self._live = None
        self.calls = 0

    def _embed_live(self, texts: list[str]) -> np.ndarray:
        if self._live is None:
            from driftgraph.config import parse_config
            from driftgraph.llm.embedder import LocalEmbedder

            self._live = LocalEmbedder(parse_config({}, "bench").embeddings)
        return self._live.embed(texts)

    def embedding(self, *, input: list[str], **_: Any) -> _Result:  # noqa: A002 - graphrag's keyword
        self.calls += 1
        return _Result(self.cache.get(list(input), self._embed_live).tolist())

    async def embedding_async(self, *, input: list[str], **kw: Any) -> _Result:  # noqa: A002
        return self.embedding(input=input, **kw)


@dataclass
class LoadedIndex:
    entities: list
    relationships: list
    reports: list
    text_units: list
    covariates: dict
    frames: dict
    store: Any
    tmpdir: tempfile.TemporaryDirectory


def read_frames(root: Path) -> dict:
    import pandas as pd

    names = ["entities", "relationships", "text_units", "communities", "community_reports"]
    frames = {n: pd.read_parquet(root / f"{n}.parquet") for n in names}
    cov = root / "covariates.parquet"
    frames["covariates"] = pd.read_parquet(cov) if cov.is_file() else None
    return frames


def entity_store(entities_df, vectors: np.ndarray, folder: str, index_name: str = "entity_description"):
    """graphrag's LanceDB store for ``entity_description`` (or ``index_name``) filled with our vectors.

    The store is created by graphrag's own ``LanceDBVectorStore.create_index``; rows are appended as Arrow
    batches in its schema (what ``load_documents`` writes, minus the per-row Python lists that would make a
    million-entity store take gigabytes to build).
    """
    import pyarrow as pa
    from graphrag_vectors.lancedb import LanceDBVectorStore

    store = LanceDBVectorStore(db_uri=folder, index_name=index_name, vector_size=vectors.shape[1])
    store.connect()
    store.create_index()
    schema = store.document_collection.schema
    ids = [str(i) for i in entities_df["id"]]
    dims = vectors.shape[1]
    for start in range(0, len(ids), 100_000):
        chunk = np.ascontiguousarray(vectors[start : start + 100_000], dtype=np.float32)
        n = len(chunk)
        cols = {}
        for field in schema:
            if field.name == store.id_field:
                cols[field.name] = pa.array(ids[start : start + n], type=field.type)
            elif field.name == store.vector_field:
                cols[field.name] = pa.FixedSizeListArray.from_arrays(pa.array(chunk.reshape(-1)), dims)
            else:
                cols[field.name] = pa.nulls(n, type=field.type)
        store.document_collection.add(pa.table(cols, schema=schema))
    return store


def open_entity_store(folder: str):
    """Connect to a store written earlier (GraphRAG's query path connects to the indexer's store)."""
    from graphrag_vectors.lancedb import LanceDBVectorStore

    store = LanceDBVectorStore(db_uri=folder, index_name="entity_description", vector_size=384)
    store.connect()
    return store


def load_index(root: Path, cache: EmbeddingCache, scope: str = "all") -> LoadedIndex:
    """The query-time objects plus the entity store.

    ``scope="all"``: the store holds every entity, as GraphRAG's indexer writes it; hits on entities that
    ``read_indexer_entities`` drops (those in no community at level <= 2) are then silently lost.
    ``scope="community"``: the store holds only the entities that survive that filter, so every one of the
    20 hits is usable -- the setup behind BASELINE.md's figures (it reproduces them exactly).
    """
    from graphrag.query.indexer_adapters import (
        read_indexer_covariates,
        read_indexer_entities,
        read_indexer_relationships,
        read_indexer_reports,
        read_indexer_text_units,
    )

    f = read_frames(root)
    entities = read_indexer_entities(f["entities"], f["communities"], COMMUNITY_LEVEL)
    if scope == "community":
        keep = {e.id for e in entities}
        ents = f["entities"][f["entities"]["id"].isin(keep)]
    else:
        ents = f["entities"]
    texts = [f"{t}:{d or ''}" for t, d in zip(ents["title"], ents["description"], strict=True)]
    tmp = tempfile.TemporaryDirectory(prefix="bench-lancedb-")
    store = entity_store(ents, cache.get(texts, CachedEmbedder(cache)._embed_live), tmp.name)
    cov = f["covariates"]
    return LoadedIndex(
        entities=entities,
        relationships=read_indexer_relationships(f["relationships"]),
        reports=read_indexer_reports(f["community_reports"], f["communities"], COMMUNITY_LEVEL),
        text_units=read_indexer_text_units(f["text_units"]),
        covariates={"claims": read_indexer_covariates(cov) if cov is not None else []},
        frames=f,
        store=store,
        tmpdir=tmp,
    )


def tokenizer():
    from graphrag.tokenizer.get_tokenizer import get_tokenizer

    return get_tokenizer(encoding_model=ENCODING)


def local_context_builder(idx: LoadedIndex, embedder: CachedEmbedder):
    """``LocalSearchMixedContext`` exactly as ``get_local_search_engine`` builds it."""
    from graphrag.query.context_builder.entity_extraction import EntityVectorStoreKey
    from graphrag.query.structured_search.local_search.mixed_context import LocalSearchMixedContext

    return LocalSearchMixedContext(
        community_reports=idx.reports,
        text_units=idx.text_units,
        entities=idx.entities,
        relationships=idx.relationships,
        covariates=idx.covariates,
        entity_text_embeddings=idx.store,
        embedding_vectorstore_key=EntityVectorStoreKey.ID,
        text_embedder=embedder,
        tokenizer=tokenizer(),
    )


def basic_context_builder(root: Path, cache: EmbeddingCache):
    """``BasicSearchContext`` as ``get_basic_search_engine`` builds it: the text units and a ``text_unit_text``
    LanceDB store of their vectors (the shared cache's). Returns the builder and the store's temp folder, which
    must outlive it."""
    from graphrag.query.indexer_adapters import read_indexer_text_units
    from graphrag.query.structured_search.basic_search.basic_context import BasicSearchContext

    embedder = CachedEmbedder(cache)
    tu = read_frames(root)["text_units"]
    tmp = tempfile.TemporaryDirectory(prefix="bench-lancedb-basic-")
    vectors = cache.get([str(t) for t in tu["text"]], embedder._embed_live)
    store = entity_store(tu, vectors, tmp.name, index_name="text_unit_text")
    builder = BasicSearchContext(
        text_embedder=embedder,
        text_unit_embeddings=store,
        text_units=read_indexer_text_units(tu),
        tokenizer=tokenizer(),
    )
    return builder, embedder, tmp


def local_params(budget: int) -> dict:
    """The factory's ``context_builder_params`` from ``LocalSearchConfig()`` with the budget swapped in."""
    from graphrag.config.models.local_search_config import LocalSearchConfig
    from graphrag.query.context_builder.entity_extraction import EntityVectorStoreKey

    ls = LocalSearchConfig()
    return {
        "text_unit_prop": ls.text_unit_prop,
        "community_prop": ls.community_prop,
        "conversation_history_max_turns": ls.conversation_history_max_turns,
        "conversation_history_user_turns_only": True,
        "top_k_mapped_entities": ls.top_k_entities,
        "top_k_relationships": ls.top_k_relationships,
        "include_entity_rank": True,
        "include_relationship_weight": True,
        "include_community_rank": False,
        "return_candidate_context": False,
        "embedding_vectorstore_key": EntityVectorStoreKey.ID,
        "max_context_tokens": budget,
    }


def unquoted_recall(ctx: str, gold: list[str]) -> float:
    """Recall after undoing the CSV quoting ``to_csv`` applies to a text holding quotes or ``|`` (a gold text
    whose quotes are doubled in the context is still there, only escaped)."""
    import csv
    import io

    texts = []
    for row in csv.reader(io.StringIO(ctx), delimiter="|", escapechar="\\"):
        texts.append("|".join(row))
    from bench import metrics

    return metrics.evidence_recall("\n".join(texts), gold)
