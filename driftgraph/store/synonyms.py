"""Synonym edges: entities whose names embed alike get ``(a)-[:SYN {similarity}]->(b)``, so the bridge can hop
from one name of a thing to another ("Rutgers" and "Rutgers University" are two entities of the same
extraction). HippoRAG 2 adds the same edges to its graph.

Two resumable steps, run by ``import-graphrag`` and ``index`` after the embeddings: every entity whose name has
no vector gets one (``name_embedding``, the title alone), then every entity not yet marked at the configured
threshold is compared with all names at once (numpy, one matrix product per batch; no vector index, so no HNSW
inserts) and linked to its ``max_per_entity`` most similar names at or above ``min_similarity``. A batch's
edges and marks are one transaction: a run that stops half-way resumes with the unmarked entities, and
adding documents compares only their new entities. A changed threshold rebuilds every edge.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from driftgraph.errors import IngestError
from driftgraph.store import ingest

if TYPE_CHECKING:
    from driftgraph.config import SynonymsConfig
    from driftgraph.store.db import Store

OnBatch = Callable[[int], None]
Task = Callable[[str, int | None], OnBatch]  # a progress bar: name and total -> call with each batch's size


@dataclass
class SynonymSummary:
    """What one run did; ``skipped`` says why nothing was done (disabled, too many entities), and
    ``too_many`` marks the one reason a user is warned about (the step was wanted and did not run)."""

    names_embedded: int = 0
    entities_linked: int = 0
    edges_written: int = 0
    edges_total: int = 0
    rebuilt: bool = False
    skipped: str | None = None
    too_many: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def synonym_state(store: Store, settings: SynonymsConfig) -> dict[str, int]:
    """Entities, names still to embed, entities marked at another threshold, SYN edges."""
    return dict(store.read("ingest/synonym_state", min_similarity=settings.min_similarity)[0])


def _all_vectors(store: Store, fresh: dict[str, Any], settings: SynonymsConfig, page_size: int) -> tuple[Any, ...]:
    """Ids (in id order), their L2-normalised name vectors and the indexes still to link; only vectors not in
    ``fresh`` are read from Neo4j (after a full import: none)."""
    import numpy as np

    ids: list[str] = []
    todo: list[int] = []
    for page in ingest.keyset_pages(store, "ingest/entity_names", page_size, min_similarity=settings.min_similarity):
        for r in page:
            if not r["linked"]:
                todo.append(len(ids))
            ids.append(r["id"])
    vectors = np.zeros((len(ids), 0), dtype=np.float32)
    if not todo:
        return ids, vectors, todo
    stored = [i for i in ids if i not in fresh]
    got: dict[str, Any] = dict(fresh)
    for start in range(0, len(stored), page_size):
        rows = store.read("ingest/entity_name_vectors", ids=stored[start : start + page_size])
        got.update((r["id"], r["embedding"]) for r in rows)
    sizes = {len(v) for v in got.values()}
    if len(sizes) > 1:  # another tool's `name_embedding` on an adopted graph, or a changed embedder
        odd = next(i for i in ids if len(got[i]) != len(got[ids[todo[0]]]))
        raise IngestError(
            f"entity name vectors of different sizes {sorted(sizes)} (e.g. entity {odd}): remove the "
            "`name_embedding` property that driftgraph did not write, then run again"
        )
    vectors = np.asarray([got[i] for i in ids], dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors /= np.where(norms > 0, norms, 1.0)
    return ids, vectors, todo


def nearest_pairs(
    vectors: Any, ids: list[str], rows: list[int], min_similarity: float, per_entity: int
) -> list[dict[str, Any]]:
    """For each index in ``rows``: its ``per_entity`` most similar other names at or above ``min_similarity``
    (ties by id), as pairs ``{a, b, similarity}`` with ``a < b``. ``vectors`` are L2-normalised rows."""
    import numpy as np

    sims = vectors[rows] @ vectors.T
    out: dict[tuple[str, str], float] = {}
    for k, i in enumerate(rows):
        row = sims[k]
        row[i] = -2.0  # never oneself
        hits = np.flatnonzero(row >= min_similarity)
        best = sorted(hits.tolist(), key=lambda j: (-float(row[j]), ids[j]))[:per_entity]
        for j in best:
            a, b = sorted((ids[i], ids[j]))
            out[(a, b)] = round(float(row[j]), 4)
    return [{"a": a, "b": b, "similarity": s} for (a, b), s in sorted(out.items())]


def link_synonyms(
    store: Store,
    embed: Callable[[list[str]], Any],
    settings: SynonymsConfig,
    page_size: int,
    task: Task | None = None,
) -> SynonymSummary:
    """Embed new names, then link every unmarked entity to its synonyms (see the module docstring)."""
    out = SynonymSummary()
    if not settings.enabled:
        out.skipped = "synonyms.enabled is false"
        return out
    state = synonym_state(store, settings)
    if state["entities"] > settings.max_entities:
        out.skipped = (
            f"{state['entities']} entities > synonyms.max_entities ({settings.max_entities}): comparing all names "
            "costs entities squared; raise the limit to build them"
        )
        out.too_many = True
        return out
    if state["stale"]:
        store.run_auto("ingest/synonym_reset")
        out.rebuilt = True
        state = synonym_state(store, settings)
    on_embed = task("embed entity names", state["unembedded"]) if task else None
    on_link = task("link synonyms", state["unlinked"]) if task else None
    fresh: dict[str, Any] = {}  # the new name vectors, so the comparison does not read them back
    out.names_embedded = ingest.embed_pending(store, "entity_name", embed, page_size, on_embed, keep=fresh)
    ids, vectors, todo = _all_vectors(store, fresh, settings, page_size)
    del fresh
    for start in range(0, len(todo), settings.batch_size):
        rows = todo[start : start + settings.batch_size]
        pairs = nearest_pairs(vectors, ids, rows, settings.min_similarity, settings.max_per_entity)
        res = store.run(
            "ingest/synonyms", pairs=pairs, ids=[ids[i] for i in rows], min_similarity=settings.min_similarity
        )[0]
        out.entities_linked += int(res["marked"])
        out.edges_written += int(res["linked"])
        if on_link is not None:
            on_link(len(rows))
    out.edges_total = int(synonym_state(store, settings)["edges"])
    return out
