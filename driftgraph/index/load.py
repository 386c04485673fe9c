"""Documents from a folder: txt, md, csv (a text column), json/jsonl (a text field), and through
index/formats/ pdf, docx, pptx and html, whose documents carry the span of every page, slide or section.

The document id is the sha256 of its text, so an unchanged file keeps its id across runs (what the
incremental update compares) and the same text under two names is indexed once. Bad input never stops a
run: empty, binary, oversized and unreadable entries are skipped and listed; text that is not UTF-8 is
decoded with replacement characters and counted, so the user sees exactly what was not read as written. A file a
format reader refuses (no text layer, encrypted, corrupt, its library not installed) is skipped with the reader's
one-line reason.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from driftgraph.config import IndexConfig
from driftgraph.errors import InputError
from driftgraph.index.formats import READERS, Span, Unreadable, heading_spans

_SNIFF_BYTES = 8192


@dataclass(frozen=True)
class Document:
    id: str
    title: str
    text: str
    metadata: dict[str, Any]
    # where each page, slide or heading section sits in ``text`` (index/chunk.py); None: not known (a document
    # stored before places were kept, read back by the document API)
    spans: tuple[Span, ...] | None = ()


@dataclass
class LoadReport:
    documents: list[Document] = field(default_factory=list)
    files: int = 0
    ignored: int = 0
    skipped: list[dict[str, str]] = field(default_factory=list)
    warnings: list[dict[str, str]] = field(default_factory=list)
    decode_warnings: int = 0
    duplicates: int = 0

    def skip(self, path: str, reason: str) -> None:
        self.skipped.append({"path": path, "reason": reason})

    def warn(self, path: str, warning: str) -> None:
        self.warnings.append({"path": path, "warning": warning})

    def summary(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "documents": len(self.documents),
            "ignored_extensions": self.ignored,
            "skipped": self.skipped,
            "warnings": self.warnings,
            "decode_warnings": self.decode_warnings,
            "duplicates": self.duplicates,
        }


def document_id(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def load_documents(root: str | Path, cfg: IndexConfig) -> LoadReport:
    """Every supported file under ``root`` (or ``root`` itself), in sorted path order."""
    root = Path(root)
    if not root.exists():
        raise InputError(f"input path not found: {root}")
    report = LoadReport()
    seen: set[str] = set()
    base = root if root.is_dir() else root.parent
    for path in _walk(root, report):
        rel = path.relative_to(base).as_posix()
        ext = path.suffix.lower().lstrip(".")
        if ext not in {e.lower().lstrip(".") for e in cfg.extensions}:
            report.ignored += 1
            continue
        report.files += 1
        data = _read_bytes(path, rel, cfg, report)
        if data is None:
            continue
        docs = _formatted(data, rel, ext, report) if ext in READERS else _plain(data, rel, ext, cfg, report)
        for doc in docs:
            if doc.id in seen:
                report.duplicates += 1
                report.warn(doc.title, "same text as an earlier document; indexed once")
                continue
            seen.add(doc.id)
            report.documents.append(doc)
    return report


def read_named(name: str, data: bytes, cfg: IndexConfig) -> LoadReport:
    """The documents of one file given as bytes under ``name`` (an upload): read by its extension as a file
    of that name in a folder would be, with the same size limit and reasons for a skip."""
    report = LoadReport(files=1)
    ext = Path(name).suffix.lower().lstrip(".")
    if ext not in {e.lower().lstrip(".") for e in cfg.extensions}:
        report.skip(name, f"extension {ext or '(none)'!r} is not in index.extensions")
    elif len(data) > cfg.max_file_bytes:
        report.skip(name, f"{len(data)} bytes is over index.max_file_bytes={cfg.max_file_bytes}")
    elif not data.strip():
        report.skip(name, "empty file")
    else:
        read = _formatted if ext in READERS else None
        report.documents += read(data, name, ext, report) if read else _plain(data, name, ext, cfg, report)
    return report


def _walk(root: Path, report: LoadReport) -> list[Path]:
    if not root.is_dir():
        return [root]
    out: list[Path] = []

    def onerror(err: OSError) -> None:
        report.skip(str(err.filename), f"unreadable directory: {err.strerror}")

    for dirpath, dirnames, filenames in os.walk(root, onerror=onerror):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        out += [Path(dirpath) / f for f in sorted(filenames) if not f.startswith(".")]
    return sorted(out)


def _read_bytes(path: Path, rel: str, cfg: IndexConfig, report: LoadReport) -> bytes | None:
    """The file's bytes, or None (skipped, with why) when it is not a readable, non-empty file within the limit."""
    try:
        st = path.stat()
    except OSError as err:
        report.skip(rel, f"unreadable: {err.strerror or err}")
        return None
    if not stat.S_ISREG(st.st_mode):
        report.skip(rel, "not a regular file")
        return None
    if st.st_size > cfg.max_file_bytes:
        report.skip(rel, f"{st.st_size} bytes is over index.max_file_bytes={cfg.max_file_bytes}")
        return None
    try:
        data = path.read_bytes()
    except OSError as err:
        report.skip(rel, f"unreadable: {err.strerror or err}")
        return None
    if not data.strip():
        report.skip(rel, "empty file")
        return None
    return data


def _formatted(data: bytes, rel: str, ext: str, report: LoadReport) -> list[Document]:
    """A PDF, DOCX, PPTX or HTML file as one document with its spans, or none (skipped with the reader's reason;
    an error no reader foresaw is a reason too, so one odd file never stops the run)."""
    try:
        got = READERS[ext](data)
    except Unreadable as err:
        report.skip(rel, str(err))
        return []
    except Exception as err:
        report.skip(rel, f"unreadable {ext.upper()}: {type(err).__name__}: {err}")
        return []
    return [Document(document_id(got.text), rel, got.text, {"path": rel, **got.metadata}, got.spans)]


def _plain(data: bytes, rel: str, ext: str, cfg: IndexConfig, report: LoadReport) -> list[Document]:
    text = _decode(data, rel, report)
    return [] if text is None else _documents(text, rel, ext, cfg, report)


def _decode(data: bytes, rel: str, report: LoadReport) -> str | None:
    if b"\x00" in data[:_SNIFF_BYTES]:
        report.skip(rel, "binary file (NUL bytes)")
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        report.decode_warnings += 1
        report.warn(rel, f"not valid UTF-8 (first bad byte at offset {err.start}); undecodable bytes replaced")
        return data.decode("utf-8", errors="replace")


def _documents(text: str, rel: str, ext: str, cfg: IndexConfig, report: LoadReport) -> list[Document]:
    if ext == "csv":
        return _csv(text, rel, cfg, report)
    if ext == "json":
        return _json(text, rel, cfg, report)
    if ext == "jsonl":
        return _jsonl(text, rel, cfg, report)
    spans = heading_spans(text) if ext in ("md", "markdown") else ()
    return [Document(document_id(text), rel, text, {"path": rel}, spans)]


def _doc(text: str, title: str, metadata: dict[str, Any]) -> Document:
    return Document(document_id(text), title, text, metadata)


def _csv(text: str, rel: str, cfg: IndexConfig, report: LoadReport) -> list[Document]:
    csv.field_size_limit(max(cfg.max_file_bytes, 131072))
    reader = csv.DictReader(io.StringIO(text, newline=""))
    column = cfg.csv_text_column
    if reader.fieldnames is None or column not in reader.fieldnames:
        found = ", ".join(reader.fieldnames or [])
        report.skip(rel, f"no column '{column}' (index.csv_text_column); columns: {found}")
        return []
    docs = []
    try:
        for row in reader:
            line = reader.line_num
            value = (row.get(column) or "").strip()
            if not value:
                report.warn(f"{rel}:{line}", f"empty '{column}' value; row skipped")
                continue
            meta = {k: v for k, v in row.items() if k and k != column and v is not None}
            docs.append(_doc(value, f"{rel}#{line}", {"path": rel, "line": line, **meta}))
    except csv.Error as err:
        report.warn(f"{rel}:{reader.line_num}", f"malformed CSV: {err}; rest of file skipped")
    return docs


def _record(obj: Any, where: str, cfg: IndexConfig, report: LoadReport, meta: dict[str, Any]) -> Document | None:
    key = cfg.json_text_field
    if not isinstance(obj, dict):
        report.warn(where, f"expected an object with '{key}', got {type(obj).__name__}; skipped")
        return None
    value = obj.get(key)
    if not isinstance(value, str) or not value.strip():
        report.warn(where, f"no text in field '{key}' (index.json_text_field); skipped")
        return None
    extra = {k: v for k, v in obj.items() if k != key and isinstance(v, str | int | float | bool)}
    return _doc(value.strip(), where, {**meta, **extra})


def _json(text: str, rel: str, cfg: IndexConfig, report: LoadReport) -> list[Document]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        report.skip(rel, f"invalid JSON at line {err.lineno} column {err.colno}: {err.msg}")
        return []
    items = data if isinstance(data, list) else [data]
    docs = []
    for i, obj in enumerate(items):
        where = rel if len(items) == 1 and not isinstance(data, list) else f"{rel}#{i}"
        doc = _record(obj, where, cfg, report, {"path": rel, "index": i})
        if doc is not None:
            docs.append(doc)
    return docs


def _jsonl(text: str, rel: str, cfg: IndexConfig, report: LoadReport) -> list[Document]:
    docs = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as err:
            report.warn(f"{rel}:{n}", f"invalid JSON ({err.msg}); line skipped")
            continue
        doc = _record(obj, f"{rel}:{n}", cfg, report, {"path": rel, "line": n})
        if doc is not None:
            docs.append(doc)
    return docs
