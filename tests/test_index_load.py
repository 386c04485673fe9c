"""Loading documents for `driftgraph index`: formats, ids, and every kind of bad input."""

from __future__ import annotations

import hashlib
import json
import os

import pytest

from driftgraph.config import IndexConfig
from driftgraph.index.load import InputError, load_documents


def _cfg(**kw) -> IndexConfig:
    return IndexConfig(**kw)


def test_formats_and_content_hash_ids(tmp_path):
    (tmp_path / "a.txt").write_text("Alpha text.", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.md").write_text("# Beta\nbody", encoding="utf-8")
    (tmp_path / "c.csv").write_text("id,body\n1,Gamma row\n2,Delta row\n", encoding="utf-8")
    (tmp_path / "d.json").write_text(json.dumps([{"content": "Eps"}, {"content": "Zeta", "year": 2020}]))
    (tmp_path / "e.jsonl").write_text('{"content": "Eta"}\n\n{"content": "Theta"}\n', encoding="utf-8")
    (tmp_path / "f.json").write_text(json.dumps({"content": "Iota"}))
    (tmp_path / "notes.odt").write_bytes(b"PK\x03\x04")  # a format no reader takes
    (tmp_path / ".hidden.txt").write_text("hidden")
    rep = load_documents(tmp_path, _cfg(csv_text_column="body", json_text_field="content"))
    titles = [d.title for d in rep.documents]
    assert titles == [
        "a.txt",
        "c.csv#2",
        "c.csv#3",
        "d.json#0",
        "d.json#1",
        "e.jsonl:1",
        "e.jsonl:3",
        "f.json",
        "sub/b.md",
    ]
    texts = [d.text for d in rep.documents]
    assert texts[1:3] == ["Gamma row", "Delta row"] and texts[-1] == "# Beta\nbody"
    for d in rep.documents:
        assert d.id == hashlib.sha256(d.text.encode()).hexdigest()
    assert rep.documents[4].metadata["year"] == 2020
    assert rep.ignored == 1 and rep.files == 6 and not rep.skipped and not rep.warnings


def test_same_text_twice_is_indexed_once(tmp_path):
    (tmp_path / "a.txt").write_text("same")
    (tmp_path / "b.txt").write_text("same")
    rep = load_documents(tmp_path, _cfg())
    assert len(rep.documents) == 1 and rep.duplicates == 1
    assert rep.warnings[0]["path"] == "b.txt"


def test_empty_file_is_skipped(tmp_path):
    (tmp_path / "empty.txt").write_text("")
    (tmp_path / "blank.md").write_text("  \n\n")
    (tmp_path / "ok.txt").write_text("fine")
    rep = load_documents(tmp_path, _cfg())
    assert [d.title for d in rep.documents] == ["ok.txt"]
    assert {s["path"]: s["reason"] for s in rep.skipped} == {"blank.md": "empty file", "empty.txt": "empty file"}


def test_binary_file_is_skipped(tmp_path):
    (tmp_path / "blob.txt").write_bytes(b"PK\x03\x04\x00\x00binary\x00")
    (tmp_path / "ok.txt").write_text("fine")
    rep = load_documents(tmp_path, _cfg())
    assert [d.title for d in rep.documents] == ["ok.txt"]
    assert rep.skipped == [{"path": "blob.txt", "reason": "binary file (NUL bytes)"}]


def test_non_utf8_is_decoded_with_a_counted_warning(tmp_path):
    (tmp_path / "latin1.txt").write_bytes("Café crème à Zürich".encode("latin-1"))
    (tmp_path / "bom.txt").write_bytes("\ufeffWith BOM".encode())
    rep = load_documents(tmp_path, _cfg())
    docs = {d.title: d.text for d in rep.documents}
    assert docs["bom.txt"] == "With BOM"
    assert docs["latin1.txt"].startswith("Caf\ufffd cr\ufffdme")
    assert rep.decode_warnings == 1
    assert rep.warnings[0]["path"] == "latin1.txt" and "not valid UTF-8" in rep.warnings[0]["warning"]


def test_file_over_size_limit_is_skipped(tmp_path):
    (tmp_path / "big.txt").write_text("x" * 101)
    (tmp_path / "small.txt").write_text("x" * 100)
    rep = load_documents(tmp_path, _cfg(max_file_bytes=100))
    assert [d.title for d in rep.documents] == ["small.txt"]
    assert rep.skipped[0]["path"] == "big.txt" and "max_file_bytes=100" in rep.skipped[0]["reason"]


def test_unreadable_entries_are_skipped(tmp_path):
    (tmp_path / "ok.txt").write_text("fine")
    os.symlink(tmp_path / "missing.txt", tmp_path / "dangling.txt")
    os.mkfifo(tmp_path / "pipe.txt")  # opening it would block: must not be read
    (tmp_path / "dir.txt").mkdir()
    rep = load_documents(tmp_path, _cfg())
    assert [d.title for d in rep.documents] == ["ok.txt"]
    reasons = {s["path"]: s["reason"] for s in rep.skipped}
    assert reasons["dangling.txt"].startswith("unreadable")
    assert reasons["pipe.txt"] == "not a regular file"


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads directories without permission bits")
def test_unreadable_directory_is_skipped(tmp_path):  # pragma: no cover - not root in CI
    (tmp_path / "ok.txt").write_text("fine")
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "x.txt").write_text("secret")
    locked.chmod(0)
    try:
        rep = load_documents(tmp_path, _cfg())
    finally:
        locked.chmod(0o755)
    assert [d.title for d in rep.documents] == ["ok.txt"]
    assert "unreadable directory" in rep.skipped[0]["reason"]


def test_structured_files_with_bad_records(tmp_path):
    (tmp_path / "nocol.csv").write_text("a,b\n1,2\n")
    (tmp_path / "rows.csv").write_text("text\nfirst\n\nsecond\n,\n")
    (tmp_path / "bad.json").write_text("{not json")
    (tmp_path / "lines.jsonl").write_text('{"text": "one"}\nnot json\n{"other": 1}\n[1]\n')
    rep = load_documents(tmp_path, _cfg())
    assert sorted(d.text for d in rep.documents) == ["first", "one", "second"]
    reasons = {s["path"]: s["reason"] for s in rep.skipped}
    assert "no column 'text'" in reasons["nocol.csv"] and "columns: a, b" in reasons["nocol.csv"]
    assert reasons["bad.json"].startswith("invalid JSON at line 1")
    warned = {w["path"] for w in rep.warnings}
    assert {"lines.jsonl:2", "lines.jsonl:3", "lines.jsonl:4"} <= warned


def test_missing_path_and_single_file(tmp_path):
    with pytest.raises(InputError, match="not found"):
        load_documents(tmp_path / "nope", _cfg())
    f = tmp_path / "one.txt"
    f.write_text("solo")
    rep = load_documents(f, _cfg())
    assert [d.title for d in rep.documents] == ["one.txt"]
