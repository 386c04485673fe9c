"""Batched, idempotent writers for the graph model (docs/guides/graphrag.md), shared by
the importer and the indexer.

Every writer takes an iterable of plain row dicts whose keys are the graph-model property names, streams
them in batches of ``batch_size`` (``UNWIND $rows ... MERGE`` from ``cypher/ingest/*.cypher``, one
transaction per batch) and returns how many rows the database actually wrote. Ids are kept as given.
Write order matters for links: documents -> chunks -> entities -> relationships -> communities ->
community reports -> claims; a link to a node that does not exist yet is skipped, not invented.

Row shapes (``None`` values remove the property; ``n_tokens`` may be left out when ``tokens`` is given,
then the writer counts it from the text named below):

- document: ``{id, title, text, metadata (dict, JSON string or None), creation_date, human_readable_id}``
- chunk: ``{id, text, n_tokens, document_id, position, human_readable_id}`` -> ``(:Chunk)-[:PART_OF]->
  (:Document)``; ``NEXT_CHUNK`` in ``position`` order per document (made after the last batch).
  ``n_tokens`` text: the chunk text.
- entity: ``{id, title, type, description, degree, frequency, n_tokens, human_readable_id, text_unit_ids}``
  -> ``(:Chunk)-[:HAS_ENTITY]->(:__Entity__)``. ``n_tokens`` text: ``"title: description"``.
- relationship: ``{id, source_id, target_id, description, weight, combined_degree, n_tokens, text_unit_ids,
  human_readable_id}`` (+ optional ``source``/``target`` titles, used only for ``n_tokens``) -> ``RELATED``.
  ``n_tokens`` text: ``"source -> target: description"`` (just the description without titles).
- community: ``{id, community, level, parent, title, size, entity_ids, relationship_ids, text_unit_ids,
  period, human_readable_id}``; ``community`` is the integer community number, ``parent`` the parent's
  number (-1 = root). -> ``(:__Entity__)-[:IN_COMMUNITY]->(c)`` for every listed entity (list the members
  at every level), ``(c)-[:PARENT]->(parent)`` after the last batch. Stored as ``community_title``; the
  node's ``title`` is the report title once a report exists.
- community report: ``{community, report_id, report_human_readable_id, title, summary, full_content, rank,
  rating_explanation, findings (list of {summary, explanation} or JSON string), full_content_json,
  n_tokens}``, matched by community number onto the ``__Community__`` node. ``n_tokens`` text: full_content.
- claim: ``{id, human_readable_id, covariate_type, type, description, status, start_date, end_date,
  source_text, subject, object, subject_entity_id, text_unit_id}`` -> ``(:Claim)-[:ABOUT]->(:__Entity__)``
  (subject), ``(:Claim)-[:FOUND_IN]->(:Chunk)``.
- embeddings: ``write_embeddings(store, kind, rows of {id, embedding})`` with kind ``entity``, ``chunk`` or
  ``community`` (``EMBED_KINDS``), or ``entity_name`` (the title alone, for synonym edges: ``store/synonyms.py``).
  A writer that changes an embedded text removes the stale vector, so ``embed_pending`` (which embeds every
  node of a kind that has none) recomputes exactly what changed.

Stored JSON: ``Document.metadata`` and ``__Community__.findings`` are JSON strings (Neo4j properties cannot
hold maps).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from contextlib import closing
from typing import Any

from driftgraph.errors import IngestError, StoreError
from driftgraph.store.db import Store

Row = dict[str, Any]
TokenCounter = Callable[[str], int]
OnBatch = Callable[[int], None]
EMBED_KINDS = ("entity", "chunk", "community")  # the vector indexes' kinds, embedded by import and index
VECTOR_KINDS = (*EMBED_KINDS, "entity_name")  # and the entity's name vector of the synonym step


# -- texts whose tokens are counted / embedded --------------------------------------------------------------
def entity_token_text(title: str | None, description: str | None) -> str:
    return f"{title or ''}: {description or ''}"


def relationship_token_text(source: str | None, target: str | None, description: str | None) -> str:
    if source is None and target is None:
        return description or ""
    return f"{source or ''} -> {target or ''}: {description or ''}"


def _with_tokens(rows: Iterable[Row], text_of: Callable[[Row], str], tokens: TokenCounter | None) -> Iterator[Row]:
    for row in rows:
        if tokens is not None and row.get("n_tokens") is None:
            row = {**row, "n_tokens": tokens(text_of(row))}
        yield row


def batched(rows: Iterable[Row], size: int) -> Iterator[list[Row]]:
    batch: list[Row] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def prefetched(batches: Iterable[list[Row]], depth: int = 2) -> Generator[list[Row], None, None]:
    """``batches``, built ahead on a thread while the caller's transaction runs (rows, token counts and parquet
    reads overlap the server's work; tiktoken releases the GIL). An error building a batch is raised here,
    after the batches before it."""
    import queue
    import threading

    done = object()
    q: queue.Queue[Any] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(item: Any) -> bool:
        """False once the consumer has gone (it stopped early): the producer then ends."""
        while not stop.is_set():
            try:
                q.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for batch in batches:
                if not put(batch):
                    return
            put(done)
        except BaseException as err:  # handed to the consumer, raised in its thread
            put(err)

    thread = threading.Thread(target=produce, name="driftgraph-rows", daemon=True)
    thread.start()
    try:
        while True:
            item = q.get()
            if item is done:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        thread.join()


def _write(
    store: Store, name: str, rows: Iterable[Row], batch_size: int, on_batch: OnBatch | None, **params: Any
) -> int:
    """Each batch is one managed transaction; ``written`` comes back from the statement's RETURN."""
    written = 0
    with closing(prefetched(batched(rows, batch_size))) as batches:  # a failed batch stops the reading thread
        for batch in batches:
            try:
                result = store.run(f"ingest/{name}", rows=batch, **params)
            except StoreError as err:
                raise IngestError(
                    f"writing {name} failed after {written} rows were committed ({err}); "
                    "nothing of the failed batch was written; the import is idempotent, re-run it to complete"
                ) from err
            written += int(result[0]["written"]) if result else 0
            if on_batch is not None:
                on_batch(len(batch))
    return written


# -- node and relationship writers --------------------------------------------------------------------------
def write_documents(store: Store, rows: Iterable[Row], batch_size: int, on_batch: OnBatch | None = None) -> int:
    def norm(row: Row) -> Row:
        meta = row.get("metadata")
        if meta is not None and not isinstance(meta, str):
            row = {**row, "metadata": json.dumps(meta, ensure_ascii=False, sort_keys=True, default=str)}
        return row

    return _write(store, "documents", (norm(r) for r in rows), batch_size, on_batch)


def write_chunks(
    store: Store,
    rows: Iterable[Row],
    batch_size: int,
    tokens: TokenCounter | None = None,
    on_batch: OnBatch | None = None,
) -> int:
    """Chunks with PART_OF, then NEXT_CHUNK for every document that received chunks."""
    documents: set[str] = set()

    def seen(row: Row) -> Row:
        if row.get("document_id") is not None:
            documents.add(row["document_id"])
        return row

    written = _write(
        store,
        "chunks",
        (seen(r) for r in _with_tokens(rows, lambda r: r.get("text") or "", tokens)),
        batch_size,
        on_batch,
    )
    link_chunks(store, sorted(documents), batch_size)
    return written


def link_chunks(store: Store, document_ids: Sequence[str], batch_size: int) -> None:
    """(Re)make NEXT_CHUNK links of these documents in position order."""
    _write(store, "next_chunks", ({"id": d} for d in document_ids), batch_size, None)


def write_entities(
    store: Store,
    rows: Iterable[Row],
    batch_size: int,
    tokens: TokenCounter | None = None,
    on_batch: OnBatch | None = None,
) -> int:
    text = lambda r: entity_token_text(r.get("title"), r.get("description"))  # noqa: E731
    return _write(store, "entities", _with_tokens(rows, text, tokens), batch_size, on_batch)


def write_relationships(
    store: Store,
    rows: Iterable[Row],
    batch_size: int,
    tokens: TokenCounter | None = None,
    on_batch: OnBatch | None = None,
) -> int:
    """Returns rows written; rows whose source or target entity does not exist are skipped."""
    text = lambda r: relationship_token_text(r.get("source"), r.get("target"), r.get("description"))  # noqa: E731
    return _write(store, "relationships", _with_tokens(rows, text, tokens), batch_size, on_batch)


def write_communities(
    store: Store, rows: Iterable[Row], batch_size: int, on_batch: OnBatch | None = None
) -> tuple[int, int]:
    """Communities with IN_COMMUNITY, then PARENT links. Returns (written, children whose parent is missing)."""
    ids: list[str] = []

    def seen(row: Row) -> Row:
        ids.append(row["id"])
        return row

    written = _write(store, "communities", (seen(r) for r in rows), batch_size, on_batch)
    return written, link_community_parents(store, ids, batch_size)


def link_community_parents(store: Store, community_ids: Sequence[str], batch_size: int) -> int:
    """PARENT links for these communities; returns how many name a parent number that does not exist."""
    missing = 0
    for batch in batched(({"id": i} for i in community_ids), batch_size):
        result = store.run("ingest/community_parents", rows=batch)
        missing += int(result[0]["missing"]) if result else 0
    return missing


def write_community_reports(
    store: Store,
    rows: Iterable[Row],
    batch_size: int,
    tokens: TokenCounter | None = None,
    on_batch: OnBatch | None = None,
) -> int:
    """Returns rows written; a report whose community number has no node is skipped."""

    def norm(row: Row) -> Row:
        findings = row.get("findings")
        if findings is not None and not isinstance(findings, str):
            row = {**row, "findings": json.dumps(list(findings), ensure_ascii=False)}
        return row

    rows = _with_tokens((norm(r) for r in rows), lambda r: r.get("full_content") or "", tokens)
    return _write(store, "community_reports", rows, batch_size, on_batch)


def write_claims(store: Store, rows: Iterable[Row], batch_size: int, on_batch: OnBatch | None = None) -> int:
    return _write(store, "claims", rows, batch_size, on_batch)


# -- embeddings ---------------------------------------------------------------------------------------------
def _check_kind(kind: str) -> None:
    if kind not in VECTOR_KINDS:
        raise ValueError(f"embedding kind must be one of {VECTOR_KINDS}, not {kind!r}")


def write_embeddings(
    store: Store, kind: str, rows: Iterable[Row], batch_size: int, on_batch: OnBatch | None = None
) -> int:
    """Rows ``{id, embedding}`` (list of floats or a numpy row) onto ``kind`` nodes; unknown ids are skipped."""
    _check_kind(kind)

    def norm(row: Row) -> Row:
        vec = row["embedding"]
        return {"id": row["id"], "embedding": vec.tolist() if hasattr(vec, "tolist") else list(vec)}

    return _write(store, f"embeddings_{kind}", (norm(r) for r in rows), batch_size, on_batch)


def pending_embedding_counts(store: Store) -> dict[str, int]:
    """How many entity / chunk / community nodes have no embedding yet."""
    rows = store.read("ingest/pending_counts")
    return {k: int(rows[0][k]) for k in EMBED_KINDS} if rows else dict.fromkeys(EMBED_KINDS, 0)


def keyset_pages(store: Store, name: str, page_size: int, **params: Any) -> Iterator[list[Row]]:
    """Pages of a read statement that takes ``$after`` and ``$limit`` and returns rows in ``id`` order."""
    after = ""
    while True:
        page = store.read(name, after=after, limit=page_size, **params)
        if not page:
            return
        yield page
        after = page[-1]["id"]


def pending_embeddings(store: Store, kind: str, page_size: int) -> Iterator[list[Row]]:
    """Pages of ``{id, text}`` for nodes without an embedding, in id order (keyset paging, one read each)."""
    _check_kind(kind)
    return keyset_pages(store, f"ingest/pending_{kind}", page_size)


def embed_pending(
    store: Store,
    kind: str,
    embed: Callable[[list[str]], Any],
    page_size: int,
    on_batch: OnBatch | None = None,
    keep: dict[str, Any] | None = None,
) -> int:
    """Embed every ``kind`` node that has no vector: one read, one embed call and one write tx per page.
    ``keep`` (if given) receives each vector by id, for a caller that uses them right after."""
    done = 0
    for page in pending_embeddings(store, kind, page_size):
        vectors = embed([r["text"] for r in page])
        rows = [{"id": r["id"], "embedding": v} for r, v in zip(page, vectors, strict=True)]
        done += write_embeddings(store, kind, rows, page_size)
        if keep is not None:
            keep.update((r["id"], r["embedding"]) for r in rows)
        if on_batch is not None:
            on_batch(len(page))
    return done


# -- deletion -----------------------------------------------------------------------------------------------
def delete_documents(store: Store, document_ids: Iterable[str], batch_size: int) -> int:
    """Documents with their chunks and the chunks' claims (entities and communities stay)."""
    return _write(store, "delete_documents", ({"id": d} for d in document_ids), batch_size, None)


def delete_communities(store: Store) -> None:
    """Every community with its links (before re-clustering)."""
    store.run_auto("ingest/delete_communities")


def delete_all(store: Store, *, keep_traces: bool = False) -> None:
    """Every driftgraph node (documents ... traces, meta); indexes stay. ``keep_traces`` keeps the stored
    retrievals (:Retrieval and :DriftStep nodes; ``index --reset`` does unless ``--reset-traces``)."""
    store.run_auto("ingest/reset_index" if keep_traces else "admin/reset")
