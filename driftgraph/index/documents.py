"""The document API: add, replace, delete, list and show documents one change at a time (``Engine.documents``,
``driftgraph documents``), instead of re-running ``index`` on a whole folder.

A change is applied the way ``index`` applies a folder: the stored documents (each Document node keeps its text
and the places of its pages, slides or sections) plus the change make the corpus, and ``sync_corpus`` brings the
index to it. So a delete removes the document's chunks and whatever only it contributed, descriptions that lost
a source are summarised again, communities the change does not touch keep their ids and reports, and the
summary counts what was re-done. Unchanged documents are read back through the call cache (``index.cache_dir``):
with the cache that built them, they cost no chat call.

A document's id is the caller's, or the sha256 of its text. Adding text that is already stored under that id is
a no-op; adding other text under a stored id is refused (that is ``replace``).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from driftgraph.errors import DocumentNotFound, InputError
from driftgraph.index.formats import spans_from_json
from driftgraph.index.load import Document, LoadReport, document_id, load_documents, read_named
from driftgraph.index.pipeline import WriteGate, sync_corpus
from driftgraph.index.progress import StageListener
from driftgraph.index.summary import Action, DocumentChange, DocumentInfo, IndexSummary, LoadSummary
from driftgraph.store.lock import writer_lock
from driftgraph.store.schema import read_meta

if TYPE_CHECKING:
    from driftgraph.runtime import Runtime
    from driftgraph.store.db import Store

Source = str | Path | tuple[str, bytes]

# one change at a time: two concurrent changes would each sync their own corpus and undo the other. In this
# process the threads queue on this lock; across processes the database's writer lock (store/lock.py) refuses
_CHANGING = threading.Lock()


def list_documents(store: Store) -> list[DocumentInfo]:
    return [_info(row) for row in store.read("documents/list")]


def get_document(store: Store, doc_id: str) -> DocumentInfo:
    rows = store.read("documents/get", id=doc_id)
    if not rows:
        raise DocumentNotFound(f"no stored document has id {doc_id!r} (`driftgraph documents list` shows them)")
    return _info(rows[0], with_text=True)


def add_documents(
    rt: Runtime,
    source: Source | None = None,
    *,
    text: str | None = None,
    title: str | None = None,
    doc_id: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    progress: bool = False,
    on_stage: StageListener | None = None,
    writing: WriteGate | None = None,
) -> DocumentChange:
    """Add the documents of ``source`` (a file or folder path, or ``(name, bytes)``) or ``text``."""
    start = time.perf_counter()
    read = read_source(rt, source, text=text, title=title, doc_id=doc_id, metadata=metadata)
    _refuse(rt, "add")
    with _CHANGING, writer_lock(rt.store, "documents add"):
        corpus = stored_corpus(rt.store)
        new: list[Document] = []
        unchanged: list[str] = []
        for doc in read.documents:
            have = corpus.get(doc.id)
            if have is None:
                new.append(doc)
            elif have.text == doc.text:
                unchanged.append(doc.id)
            else:
                raise InputError(
                    f"a document with id {doc.id!r} is stored with other text: use `documents replace {doc.id}`"
                )
        summary = _sync(rt, [*corpus.values(), *new], read, "add", progress, on_stage, writing) if new else None
    return DocumentChange(
        "add",
        tuple(d.id for d in new),
        tuple(unchanged),
        tuple(read.skipped),
        summary,
        time.perf_counter() - start,
        tuple(read.warnings),
    )


def replace_document(
    rt: Runtime,
    doc_id: str,
    source: Source | None = None,
    *,
    text: str | None = None,
    title: str | None = None,
    metadata: Mapping[str, Any] | None = None,
    progress: bool = False,
    on_stage: StageListener | None = None,
    writing: WriteGate | None = None,
) -> DocumentChange:
    """Replace the stored document ``doc_id`` by ``source`` or ``text``; it keeps its id (and, for ``text``,
    its title and metadata unless given)."""
    start = time.perf_counter()
    read = read_source(rt, source, text=text, title=title, doc_id=doc_id, metadata=metadata)
    _refuse(rt, "replace")
    with _CHANGING, writer_lock(rt.store, "documents replace"):
        corpus = stored_corpus(rt.store)
        old = corpus.get(doc_id)
        if old is None:
            raise DocumentNotFound(f"no stored document has id {doc_id!r}: use `documents add` for a new one")
        new = read.documents[0]
        if source is None:  # plain text: the stored title and metadata stay unless given
            new = replace(new, title=title or old.title, metadata={**old.metadata, **(metadata or {})})
        if new.text == old.text and new.title == old.title and new.metadata == old.metadata:
            return DocumentChange("replace", (), (doc_id,), seconds=time.perf_counter() - start)
        corpus[doc_id] = new
        summary = _sync(rt, list(corpus.values()), read, "replace", progress, on_stage, writing)
    return DocumentChange(
        "replace", (doc_id,), (), tuple(read.skipped), summary, time.perf_counter() - start, tuple(read.warnings)
    )


def delete_documents(
    rt: Runtime,
    doc_ids: Sequence[str],
    *,
    progress: bool = False,
    on_stage: StageListener | None = None,
    writing: WriteGate | None = None,
) -> DocumentChange:
    """Delete the stored documents ``doc_ids`` and everything only they contributed."""
    start = time.perf_counter()
    if not doc_ids:
        raise InputError("documents delete: give at least one document id")
    _refuse(rt, "delete")
    with _CHANGING, writer_lock(rt.store, "documents delete"):
        corpus = stored_corpus(rt.store)
        missing = [i for i in doc_ids if i not in corpus]
        if missing:
            raise DocumentNotFound(
                f"no stored document has id {missing[0]!r} ({len(missing)} unknown): nothing was deleted"
            )
        gone = set(doc_ids)
        kept = [d for d in corpus.values() if d.id not in gone]
        summary = _sync(rt, kept, LoadReport(), "delete", progress, on_stage, writing)
    return DocumentChange("delete", tuple(sorted(gone)), (), (), summary, time.perf_counter() - start)


def stored_corpus(store: Store) -> dict[str, Document]:
    """Every stored document, as ``index`` read it (text, title, metadata, places), by id."""
    out: dict[str, Document] = {}
    for row in store.read("documents/corpus"):
        out[row["id"]] = Document(
            row["id"], row["title"] or "", row["text"] or "", _metadata(row["metadata"]), spans_from_json(row["spans"])
        )
    return out


def read_source(
    rt: Runtime,
    source: Source | None,
    *,
    text: str | None,
    title: str | None,
    doc_id: str | None,
    metadata: Mapping[str, Any] | None,
) -> LoadReport:
    """The documents a change brings, with the caller's title, id and metadata applied. A path or upload
    that yields none is an error naming why (the reader's reason for each file skipped)."""
    cfg = rt.config.index
    if (source is None) == (text is None):
        raise InputError("give either a path or (name, bytes), or text=, not both and not neither")
    if text is not None:
        if not text.strip():
            raise InputError("the document's text is empty")
        got = LoadReport(files=1)
        name = title or f"text {document_id(text)[:12]}"
        got.documents.append(Document(document_id(text), name, text, {}))
    elif isinstance(source, tuple):
        name, data = source
        got = read_named(name, data, cfg)
    else:
        assert source is not None  # one of the two, checked above
        got = load_documents(source, cfg)
    if not got.documents:
        why = "; ".join(f"{s['path']}: {s['reason']}" for s in got.skipped[:5]) or "no text found"
        raise InputError(f"no document to take from {_label(source, text)} ({why})")
    if (doc_id is not None or title is not None) and len(got.documents) > 1:
        raise InputError(
            f"an id or title names one document, and {_label(source, text)} holds {len(got.documents)}: "
            "add them without one (each gets its content's id)"
        )
    docs = []
    for doc in got.documents:
        doc = replace(doc, metadata={**doc.metadata, **(metadata or {})})
        if doc_id is not None:
            doc = replace(doc, id=doc_id)
        if title is not None:
            doc = replace(doc, title=title)
        docs.append(doc)
    got.documents = docs
    return got


def folder_order(doc: Document) -> tuple[str, int, str]:
    """Where ``index`` would read the document in a folder: by path, then by place in its file (a CSV line, a
    JSON item). Descriptions merge in chunk order, so the same documents in this order give the same graph (and
    the same cached summaries and reports) whether they came through the API or a folder."""
    meta = doc.metadata
    path = meta["path"] if isinstance(meta.get("path"), str) else doc.title
    place = meta.get("line", meta.get("index", 0))
    return (path, place if isinstance(place, int) else 0, doc.id)


def _refuse(rt: Runtime, action: Action) -> None:
    """Before the writer lock (whose node is a write): a refused change changes nothing."""
    meta = read_meta(rt.store)
    if meta is not None and meta.filled_by != "index":
        raise InputError(
            f"documents {action}: this database's index was written by `{meta.filled_by}`, and the document API "
            "changes indexes built by `driftgraph index` (it would chunk and extract every document again): "
            "index your documents with `driftgraph index DIR --reset` first, or use another database (NEO4J_DATABASE)"
        )


def _sync(
    rt: Runtime,
    docs: list[Document],
    read: LoadReport,
    action: Action,
    progress: bool,
    on_stage: StageListener | None = None,
    writing: WriteGate | None = None,
) -> IndexSummary:
    return sync_corpus(
        rt,
        sorted(docs, key=folder_order),
        input=f"documents {action}",
        load=LoadSummary.from_dict(read.summary()),
        progress=progress,
        on_stage=on_stage,
        writing=writing,
    )


def _label(source: Source | None, text: str | None) -> str:
    if text is not None:
        return "the text"
    return source[0] if isinstance(source, tuple) else str(source)


def _metadata(value: Any) -> dict[str, Any]:
    if not value:
        return {}
    if isinstance(value, str):
        try:
            got = json.loads(value)
        except json.JSONDecodeError:
            return {"metadata": value}
        return got if isinstance(got, dict) else {"metadata": got}
    return dict(value)


def _info(row: Mapping[str, Any], *, with_text: bool = False) -> DocumentInfo:
    return DocumentInfo(
        id=row["id"],
        title=row["title"] or "",
        metadata=_metadata(row["metadata"]),
        characters=int(row.get("characters") or len(row.get("text") or "")),
        chunks=int(row["chunks"] or 0),
        human_readable_id=row.get("human_readable_id"),
        text=row.get("text") if with_text else None,
    )
