"""GraphRAG folder -> Neo4j: validate everything, then stream each table through the shared writers, embed.

Order: documents, text units, entities, relationships, communities, reports, claims (each link needs its
target to exist), then embeddings (precomputed GraphRAG vectors when their dimension matches the
embedder, the configured embedder for everything still without a vector). Every GraphRAG id is kept.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from driftgraph.config import ImportConfig
from driftgraph.importers.graphrag import EMBEDDING_FILES, TableFile, Warnings, iter_rows
from driftgraph.importers.summary import ImportEmbedding, ImportSummary, KindEmbedding, NodeCounts, TableWrite
from driftgraph.importers.validate import Catalog, open_folder
from driftgraph.store import ingest
from driftgraph.store.calibration import calibrate, clear_calibration
from driftgraph.store.foreign import refuse_foreign
from driftgraph.store.schema import mark_filled_by
from driftgraph.store.synonyms import SynonymSummary, link_synonyms

if TYPE_CHECKING:
    from driftgraph.llm.embedder import Embedder
    from driftgraph.runtime import Runtime
    from driftgraph.store.db import Store

Row = dict[str, Any]


class Progress(Protocol):
    """Where per-table progress goes; ``task`` returns the function to call with each batch's size."""

    def task(self, name: str, total: int | None) -> Callable[[int], None]: ...


class NoProgress:
    def task(self, name: str, total: int | None) -> Callable[[int], None]:
        return lambda n: None


def run_import(
    rt: Runtime,
    path: str | Path,
    *,
    reset: bool = False,
    embed: bool | None = None,
    batch_size: int | None = None,
    progress: Progress | None = None,
) -> ImportSummary:
    """Import one GraphRAG output folder; returns its summary (counts, warnings, embedding, seconds)."""
    cfg = rt.config
    batch = batch_size or cfg.import_.batch_size
    do_embed = cfg.import_.embed if embed is None else embed
    progress = progress or NoProgress()
    started = time.perf_counter()
    phases: dict[str, float] = {}

    def lap(phase: str) -> None:
        phases[phase] = round(time.perf_counter() - started - sum(phases.values()), 2)

    cat = open_folder(path)  # every hard error is raised here, before the database is touched
    lap("validate")
    store = rt.store
    refuse_foreign(store, "import-graphrag --reset" if reset else "import-graphrag", reset)
    if reset:
        ingest.delete_all(store)
        store.run_auto("admin/drop_schema")
        lap("reset")
    rt.ensure_schema()
    mark_filled_by(store, "import-graphrag")
    lap("schema")
    from driftgraph.llm.tokenizer import count_tokens

    encoding = cfg.tokenizer.encoding

    def tokens(text: str) -> int:
        return count_tokens(text, encoding)

    if cat.placeholder_ids:  # endpoints entities.parquet lacks, before the relationships that need them
        rows = [{"id": pid, "title": title} for title, pid in sorted(cat.placeholder_ids.items())]
        store.run("ingest/placeholder_entities", rows=rows)
    tables = _write_tables(store, cat, batch, tokens, progress)
    lap("write")
    embedded: ImportEmbedding | None = None
    synonyms = SynonymSummary(skipped="--no-embed")
    if do_embed:
        job = EmbedJob(store, rt.embedder, cfg.import_.embed_batch_size, cat.warnings, cfg.import_)
        embedded = embed_all(job, cat.directory, progress)
        lap("embed")
        synonyms = link_synonyms(store, rt.embedder.embed, cfg.synonyms, cfg.import_.embed_batch_size, progress.task)
        if synonyms.too_many:
            cat.warnings.add("synonyms_skipped", synonyms.skipped or "")
        lap("synonyms")
    from driftgraph.store.online import await_online

    await_online(store, cfg.neo4j.index_wait_s)  # a query right after the import finds every index ONLINE
    if do_embed:  # the index's own entry threshold, measured over the vector indexes (store/calibration.py)
        calibrate(store, rt.embedder.embed, rt.embedder.model_id)
    else:  # no vectors to measure: a value from an earlier import is void
        clear_calibration(store)
    lap("indexes")
    counts = store.read("admin/counts")[0]
    return ImportSummary(
        source=str(cat.directory),
        counts=NodeCounts(
            documents=counts["documents"],
            chunks=counts["chunks"],
            entities=counts["entities"],
            communities=counts["communities"],
            claims=counts["claims"],
        ),
        relationships=counts["relationships"],
        placeholder_entities=tuple(sorted(cat.placeholder_ids)),  # in entities' count, flagged placeholder=true
        tables=tables,
        embedded=embedded,
        synonyms=synonyms,
        warnings=dict(sorted(cat.warnings.counts.items())),
        warning_examples=dict(sorted(cat.warnings.examples.items())),
        phase_seconds=phases,
        seconds=round(time.perf_counter() - started, 2),
    )


def _write_tables(
    store: Store, cat: Catalog, batch: int, tokens: Callable[[str], int], progress: Progress
) -> dict[str, TableWrite]:
    out: dict[str, TableWrite] = {}

    skipped = {  # rows validation already counted as skipped, so the bars end full
        "entities": cat.warnings.counts["entities_without_title"],
        "community_reports": cat.warnings.counts["reports_unknown_community"],
    }

    writers: dict[str, Callable[[TableFile, Callable[[int], None]], int]] = {
        "documents": lambda tf, tick: ingest.write_documents(store, _documents(tf, batch), batch, tick),
        "text_units": lambda tf, tick: ingest.write_chunks(store, _chunks(tf, cat, batch), batch, tokens, tick),
        "entities": lambda tf, tick: ingest.write_entities(store, _entities(tf, cat, batch), batch, tokens, tick),
        "relationships": lambda tf, tick: ingest.write_relationships(
            store, _relationships(tf, cat, batch), batch, tokens, tick
        ),
        "communities": lambda tf, tick: ingest.write_communities(store, _communities(tf, batch), batch, tick)[0],
        "community_reports": lambda tf, tick: ingest.write_community_reports(
            store, _reports(tf, cat, batch), batch, tokens, tick
        ),
        "covariates": lambda tf, tick: ingest.write_claims(store, _claims(tf, cat, batch), batch, tick),
    }
    for name, write in writers.items():  # in link order: a link's target is written before its source
        tf = cat.files.get(name)
        if tf is None:  # only covariates are optional
            continue
        started = time.perf_counter()
        written = write(tf, progress.task(name, tf.rows - skipped.get(name, 0)))
        out[name] = TableWrite(tf.path.name, tf.rows, written, round(time.perf_counter() - started, 2))
    return out


# -- table rows -> graph-model rows (generators: one record batch in memory at a time) ---------------------
def _rows(tf: TableFile, batch: int) -> Iterator[Row]:
    for rows in iter_rows(tf, batch):
        yield from rows


def _documents(tf: TableFile, batch: int) -> Iterator[Row]:
    for r in _rows(tf, batch):
        yield {
            "id": r["id"],
            "title": r.get("title"),
            "text": r.get("text"),
            "metadata": r.get("metadata"),
            "creation_date": r.get("creation_date"),
            "human_readable_id": r.get("human_readable_id"),
        }


def _chunks(tf: TableFile, cat: Catalog, batch: int) -> Iterator[Row]:
    fallback: dict[str, int] = {}  # order of appearance, when documents.parquet lists no text_unit_ids
    for r in _rows(tf, batch):
        doc: str = r.get("document_id") or next(iter(r.get("document_ids") or []), None) or ""
        position = cat.chunk_position.get(r["id"])
        if position is None:
            position = fallback[doc] = fallback.get(doc, -1) + 1
        yield {
            "id": r["id"],
            "text": r["text"] or "",
            "document_id": doc,
            "position": position,
            "human_readable_id": r.get("human_readable_id"),
        }


def _entities(tf: TableFile, cat: Catalog, batch: int) -> Iterator[Row]:
    known = cat.entity_id_by_title
    for r in _rows(tf, batch):
        if known.get(r.get("title") or "") != r["id"]:  # no title (counted as a warning by validation)
            continue
        yield {
            "id": r["id"],
            "title": r["title"],
            "type": r.get("type"),
            "description": r.get("description"),
            "degree": r.get("degree"),
            "frequency": r.get("frequency"),
            "human_readable_id": r.get("human_readable_id"),
            "text_unit_ids": r.get("text_unit_ids") or [],
        }


def _relationships(tf: TableFile, cat: Catalog, batch: int) -> Iterator[Row]:
    ids = {**cat.placeholder_ids, **cat.entity_id_by_title}  # an unknown endpoint has a placeholder entity
    for r in _rows(tf, batch):
        src, dst = ids.get(r["source"]), ids.get(r["target"])
        if src is None or dst is None:  # no title at all
            continue
        yield {
            "id": r["id"],
            "source_id": src,
            "target_id": dst,
            "source": r["source"],
            "target": r["target"],
            "description": r.get("description"),
            "weight": r.get("weight"),
            "combined_degree": r.get("combined_degree"),
            "text_unit_ids": r.get("text_unit_ids") or [],
            "human_readable_id": r.get("human_readable_id"),
        }


def _communities(tf: TableFile, batch: int) -> Iterator[Row]:
    for r in _rows(tf, batch):
        parent = r.get("parent")
        yield {
            "id": r["id"],
            "community": r["community"],
            "level": r["level"],
            "parent": -1 if parent is None else parent,
            "title": r.get("title"),
            "size": r.get("size") if r.get("size") is not None else len(r.get("entity_ids") or []),
            "entity_ids": r.get("entity_ids") or [],
            "relationship_ids": r.get("relationship_ids") or [],
            "text_unit_ids": r.get("text_unit_ids") or [],
            "period": r.get("period"),
            "human_readable_id": r.get("human_readable_id"),
        }


def _reports(tf: TableFile, cat: Catalog, batch: int) -> Iterator[Row]:
    for r in _rows(tf, batch):
        if r["community"] not in cat.community_numbers:  # counted as reports_unknown_community
            continue
        yield {
            "community": r["community"],
            "report_id": r.get("id"),
            "report_human_readable_id": r.get("human_readable_id"),
            "title": r.get("title"),
            "summary": r.get("summary"),
            "full_content": r["full_content"],
            "rank": r.get("rank"),
            "rating_explanation": r.get("rating_explanation"),
            "findings": r.get("findings"),
            "full_content_json": r.get("full_content_json"),
        }


def _claims(tf: TableFile, cat: Catalog, batch: int) -> Iterator[Row]:
    ids = cat.entity_id_by_title
    for r in _rows(tf, batch):
        yield {
            "id": r["id"],
            "human_readable_id": r.get("human_readable_id"),
            "covariate_type": r.get("covariate_type"),
            "type": r.get("type"),
            "description": r.get("description"),
            "status": r.get("status"),
            "start_date": r.get("start_date"),
            "end_date": r.get("end_date"),
            "source_text": r.get("source_text"),
            "subject": r["subject_id"],
            "object": r.get("object_id"),
            "subject_entity_id": ids.get(r["subject_id"]),
            "text_unit_id": r.get("text_unit_id"),
        }


# -- embeddings -----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class EmbedJob:
    """Who embeds an import and how: the store, the embedder, texts per call (``page``), where warnings go and the
    bulk-write settings for precomputed vectors."""

    store: Store
    embedder: Embedder
    page: int
    warnings: Warnings
    bulk: ImportConfig | None = None


def embed_all(job: EmbedJob, directory: Path, progress: Progress) -> ImportEmbedding:
    """Precomputed vectors of matching dimension first, then the embedder for every node still without one."""
    store, embedder, page = job.store, job.embedder, job.page
    kinds = {kind: _precomputed(job, directory / file, kind) for kind, file in EMBEDDING_FILES.items()}
    pending = ingest.pending_embedding_counts(store)
    started, total = time.perf_counter(), 0
    for kind in ingest.EMBED_KINDS:
        tick = progress.task(f"embed {kind}", pending[kind])
        n = ingest.embed_pending(store, kind, embedder.embed, page, tick)
        kinds[kind] = replace(kinds.get(kind, KindEmbedding()), embedded=n)
        total += n
    seconds = time.perf_counter() - started
    return ImportEmbedding(
        model=embedder.model_id,
        dimensions=embedder.dimensions,
        kinds=kinds,
        embed_seconds=round(seconds, 2),
        items_per_second=round(total / seconds, 1) if total and seconds > 0 else None,
    )


PROVENANCE_SAMPLE = 5
PROVENANCE_MIN_COSINE = 0.9  # the same model on the same text gives ~1.0; another model of that size ~0


def _other_model(
    store: Store, embedder: Embedder, tf: TableFile, id_map: dict[str, str] | None, page: int
) -> str | None:
    """None when a sample of the file's vectors matches what the embedder computes for the same nodes' texts;
    else why not (a matching dimension alone does not make vectors comparable with the query's)."""
    import numpy as np

    sample: dict[str, list[float]] = {}
    for batch in iter_rows(tf, page):
        for r in batch:
            node_id = r["id"] if id_map is None else id_map.get(r["id"])
            if node_id is not None and r["embedding"] is not None and len(sample) < PROVENANCE_SAMPLE:
                sample[node_id] = list(r["embedding"])
        if len(sample) >= PROVENANCE_SAMPLE:
            break
    texts = {r["id"]: r["text"] for r in store.read("ingest/embed_texts", ids=list(sample)) if r["text"]}
    ids = [i for i in sample if i in texts]
    if not ids:
        return "no sampled vector belongs to an imported node with text, so its model cannot be checked"
    ours = np.asarray(embedder.embed([texts[i] for i in ids]), dtype=np.float64)
    theirs = np.asarray([sample[i] for i in ids], dtype=np.float64)
    theirs /= np.clip(np.linalg.norm(theirs, axis=1, keepdims=True), 1e-12, None)
    ours /= np.clip(np.linalg.norm(ours, axis=1, keepdims=True), 1e-12, None)
    cosine = float(np.mean(np.sum(ours * theirs, axis=1)))
    if cosine >= PROVENANCE_MIN_COSINE:
        return None
    return (
        f"its vectors are not {embedder.model_id}'s (mean cosine {cosine:.2f} with the embedder's vectors of the "
        f"same {len(ids)} texts, below {PROVENANCE_MIN_COSINE})"
    )


def _precomputed(job: EmbedJob, path: Path, kind: str) -> KindEmbedding:
    """Use ``embeddings.*.parquet`` only when its vectors come from the configured embedder: the same dimension
    and, on a sample, the vectors the embedder gives the same texts (``_other_model``); otherwise say why not."""
    if not path.is_file():
        return KindEmbedding()
    store, embedder, page, warnings = job.store, job.embedder, job.page, job.warnings
    from driftgraph.importers.graphrag import Col, Table, open_table
    from driftgraph.store.bulk import parallel_write, vector_batches, vector_dimensions

    tf = open_table(path, Table(path.stem, (Col("id", "string", True), Col("embedding", "any", True))))
    dims = vector_dimensions(path)  # in Arrow: no Python float per value
    if dims != {embedder.dimensions}:
        found = "/".join(str(d) for d in sorted(dims)) or "no"
        note = (
            f"{path.name} holds {found}-d vectors but embedder {embedder.model_id} is {embedder.dimensions}-d: "
            f"re-embedded with {embedder.model_id}"
        )
        warnings.add("embeddings_wrong_dimension", note)
        return KindEmbedding(note=note)
    id_map: dict[str, str] | None = None
    if kind == "community":  # GraphRAG keys report vectors by report id
        id_map = {r["report_id"]: r["id"] for r in store.read("ingest/community_report_ids")}
    other = _other_model(store, embedder, tf, id_map, page)
    if other is not None:
        note = f"{path.name}: {other}: re-embedded with {embedder.model_id}"
        warnings.add("embeddings_other_model", note)
        return KindEmbedding(note=note)
    bulk = job.bulk or ImportConfig()
    batches = vector_batches(path, bulk.vector_batch_size, id_map)
    written = parallel_write(store, f"ingest/embeddings_{kind}", batches, bulk.writers)
    return KindEmbedding(precomputed=written, note=f"used {written} vectors from {path.name}")
