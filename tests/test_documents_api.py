"""The document API (``engine.documents``, ``driftgraph documents``): one change at a time gives the index that
``index`` gives for the folder holding the same documents. Real Neo4j, the real openai client against the fake
server (tests/support/index_responder.py: entities derived from the chunk text), the local embedder."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from driftgraph.api import Engine
from driftgraph.errors import DocumentNotFound, InputError
from tests.conftest import make_config
from tests.support.index_responder import responder

pytestmark = pytest.mark.e2e
EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "docs"
INDEX = {"chunk_size": 80, "chunk_overlap": 10, "claims": True, "description_max_tokens": 60, "concurrency": 3}
FERRY = (
    "The Kelmouth Ferry crosses to Selsey Point twice a day. Captain Ruth Amadi has run the Kelmouth "
    "Ferry since 2011 and buys her spare parts from Marrow Bay Shipyard."
)
NOTES = """# Operations

## Storm recovery

After the storm the night crew of Ines Halloran checked every mooring. Pilot Boat Heron carried the divers.
"""


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    shutil.copytree(EXAMPLES, docs)
    return docs


@pytest.fixture
def cfg(neo4j_cfg, neo4j_config, fake_llm, tmp_path):
    fake_llm.responder = responder
    return make_config(
        neo4j_config,
        llm={"base_url": fake_llm.base_url, "model": "fake-model", "backoff_base_s": 0.0},
        index={**INDEX, "cache_dir": str(tmp_path / "cache")},
    )


def _snapshot(store) -> dict:
    snap = store.read("tests/index_snapshot")[0]
    return {k: sorted(map(str, v)) for k, v in snap.items()}


def _graph_of(snap: dict) -> dict:
    """The snapshot without community numbers: a community formed again after a change gets a fresh number."""
    drop = lambda row: [x for i, x in enumerate(eval(row)) if i != 1]  # noqa: E731,S307 (our own str(list))
    return {**snap, "communities": sorted(map(str, map(drop, snap["communities"])))}


def _graph(store) -> dict:
    return _graph_of(_snapshot(store))


def _extract_texts(fake_llm, since: int) -> list[str]:
    return [
        r["messages"][0]["content"]
        for r in fake_llm.chat_requests()[since:]
        if (r.get("response_format") or {}).get("json_schema", {}).get("name") == "extract_graph"
        and len(r["messages"]) == 1
    ]


def _titles(store, title: str) -> list[str]:
    return store.read("tests/document_entities", title=title)[0]["titles"]


def test_add_replace_delete_match_a_folder_run_and_pay_only_for_the_change(cfg, fake_llm, corpus, store):
    with Engine(cfg) as eng:
        first = eng.index(corpus)
        base = _snapshot(store)
        assert first.failures.count == 0 and base["communities"]

        n = len(fake_llm.chat_requests())
        added = eng.documents.add(text=FERRY, title="ferry.txt", metadata={"source": "harbour office"})
        assert added.changed and len(added.documents) == 1 and added.unchanged == ()
        s = added.index
        assert s is not None and s.documents.to_dict() == {
            "total": 5,
            "added": 1,
            "removed": 0,
            "replaced": 0,
            "unchanged": 4,
        }
        texts = _extract_texts(fake_llm, n)
        assert texts and all("Kelmouth Ferry" in t for t in texts), "only the new document is extracted"
        assert s.redone.reports_reused > 0 and s.redone.reports_generated < s.reports
        assert "CAPTAIN RUTH AMADI" in _titles(store, "ferry.txt")
        doc_id = added.documents[0]
        got = eng.documents.get(doc_id)
        assert got.text == FERRY and got.title == "ferry.txt" and got.metadata == {"source": "harbour office"}
        assert got.chunks >= 1

        # `index` over a folder holding the same documents gives the same graph, with no call: one sync
        with_ferry = _snapshot(store)
        (corpus / "ferry.txt").write_text(FERRY, encoding="utf-8")
        folder = eng.index(corpus)
        assert folder.llm_calls == 0
        assert folder.documents.unchanged == 5 and _snapshot(store) == with_ferry
        (corpus / "ferry.txt").unlink()
        assert eng.documents.get(doc_id).metadata == {"path": "ferry.txt"}, "the folder run wrote its metadata"

        # the same text again: a no-op that calls nothing
        n = len(fake_llm.chat_requests())
        again = eng.documents.add(text=FERRY, title="ferry.txt")
        assert not again.changed and again.unchanged == (doc_id,) and again.documents == ()
        assert len(fake_llm.chat_requests()) == n and _snapshot(store) == with_ferry
        with pytest.raises(InputError, match="replace"):
            eng.documents.add(text="Other text entirely about Ruth.", id=doc_id)

        # replace: the id stays, what only the old text contributed goes, the new text comes in
        n = len(fake_llm.chat_requests())
        replaced = eng.documents.replace(doc_id, text="Captain Tomas Reyes now runs the Kelmouth Ferry.")
        assert replaced.documents == (doc_id,) and replaced.index is not None
        assert replaced.index.documents.to_dict() == {
            "total": 5,
            "added": 0,
            "removed": 0,
            "replaced": 1,
            "unchanged": 4,
        }
        assert all("Tomas Reyes" in t for t in _extract_texts(fake_llm, n))
        titles = _titles(store, "ferry.txt")
        assert "CAPTAIN TOMAS REYES" in titles and "CAPTAIN RUTH AMADI" not in titles
        assert eng.documents.get(doc_id).metadata == {"path": "ferry.txt"}, "kept for a text replace"

        # delete: back to exactly the folder's index, with no call
        n = len(fake_llm.chat_requests())
        deleted = eng.documents.delete(doc_id)
        assert deleted.documents == (doc_id,) and deleted.index is not None
        assert deleted.index.redone.deleted["documents"] == 1 and len(fake_llm.chat_requests()) == n
        assert _graph(store) == _graph_of(base), "same entities, relationships, chunks, community ids and members"
        assert {d.title for d in eng.documents.list()} == {p.name for p in EXAMPLES.iterdir()}
        with pytest.raises(DocumentNotFound):
            eng.documents.delete(doc_id)
        with pytest.raises(DocumentNotFound):
            eng.documents.get("no-such-id")

        # every document deleted: an empty index, not an error
        emptied = eng.documents.delete(*(d.id for d in eng.documents.list()))
        assert emptied.index is not None and emptied.index.documents.removed == 4
        empty = _snapshot(store)
        assert empty["entities"] == [] and empty["chunks"] == [] and empty["communities"] == []


def test_cli_documents_keep_places_across_changes_and_exit_codes_say_what_happened(cfg, neo4j_config, store, tmp_path):
    conf = tmp_path / "driftgraph.yaml"
    conf.write_text(yaml.safe_dump({"llm": cfg.llm.model_dump(), "index": cfg.index.model_dump()}))
    env = {
        **os.environ,
        "NEO4J_URI": neo4j_config["uri"],
        "NEO4J_USERNAME": neo4j_config["username"],
        "NEO4J_PASSWORD": neo4j_config["password"],
        "NEO4J_DATABASE": neo4j_config["database"],
        "OPENAI_API_KEY": "",
        "OPENAI_BASE_URL": "",
    }

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "driftgraph", "--config", str(conf), "documents", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )

    notes = tmp_path / "notes.md"
    notes.write_text(NOTES, encoding="utf-8")
    out = cli("add", str(notes), "--meta", "team=ops", "--json")
    assert out.returncode == 0, out.stderr
    change = json.loads(out.stdout)
    assert change["action"] == "add" and len(change["documents"]) == 1 and change["index"]["documents"]["added"] == 1
    notes_id = change["documents"][0]

    def places() -> set[str]:
        rows = store.read("tests/chunk_locations", document_id=notes_id)
        return {r["location"] for r in rows}

    where = places()
    assert where and all("Operations > Storm recovery" in w for w in where), where

    # another document: the stored one is chunked again from its stored text and places, which stay
    out = cli("add", "--text", FERRY, "--title", "ferry", "--json")
    assert out.returncode == 0, out.stderr
    ferry_id = json.loads(out.stdout)["documents"][0]
    where = places()
    assert where and all("Operations > Storm recovery" in w for w in where), where

    # a document stored before places were kept (no spans): a change keeps its chunks' locations
    assert store.run("tests/forget_spans", document_id=notes_id)[0]["forgotten"] == 1
    out = cli("replace", ferry_id, "--text", FERRY + " It also carries mail.", "--json")
    assert out.returncode == 0, out.stderr
    assert places() == where

    listed = json.loads(cli("list", "--json").stdout)
    assert {d["id"]: d["metadata"].get("team") for d in listed} == {notes_id: "ops", ferry_id: None}
    shown = cli("show", ferry_id)
    assert shown.returncode == 0 and FERRY in shown.stdout

    gone = cli("delete", "no-such-document")
    assert gone.returncode == 1 and gone.stderr.count("\n") == 1 and "no-such-document" in gone.stderr
    assert len(json.loads(cli("list", "--json").stdout)) == 2, "an unknown id deletes nothing"
    none = cli("add")
    assert none.returncode != 0 and "--text" in none.stderr
    skipped = tmp_path / "empty.txt"
    skipped.write_text("   ", encoding="utf-8")
    empty = cli("add", str(skipped))
    assert empty.returncode == 1 and "empty file" in empty.stderr

    out = cli("delete", ferry_id, "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["index"]["documents"]["removed"] == 1
    assert [d["id"] for d in json.loads(cli("list", "--json").stdout)] == [notes_id]


def test_an_upload_is_read_by_its_name_and_an_imported_index_is_refused(cfg, store):
    with Engine(cfg) as eng:
        up = eng.documents.add(("notes.md", NOTES.encode()), metadata={"uploaded_by": "ci"})
        assert up.changed
        doc = eng.documents.get(up.documents[0])
        assert doc.title == "notes.md" and doc.metadata == {"path": "notes.md", "uploaded_by": "ci"}
        with pytest.raises(InputError, match="index.extensions"):
            eng.documents.add(("tool.exe", b"MZ\x90\x00"))
        store.run("schema/mark_filled_by", filled_by="import-graphrag")
        with pytest.raises(InputError, match="import-graphrag"):
            eng.documents.add(text=FERRY)
        assert [d.id for d in eng.documents.list()] == [doc.id], "a refused change changes nothing"


def test_one_writer_at_a_time_across_processes_and_a_dead_holder_lapses(cfg, store):
    import time

    from driftgraph.errors import IndexBusy
    from driftgraph.store.lock import writer_lock

    with Engine(cfg) as eng:
        first = eng.documents.add(text=FERRY, title="ferry")
        assert store.read("tests/lock_state", lock="index")[0]["owner"] is None, "released after the change"
        # another process holds the lock: a change is refused before it reads or writes anything
        other = "index /data (pid 4242 on elsewhere)"
        away = {"machine": "elsewhere", "pid": 4242, "stale": None}  # a pid on another machine says nothing here
        taken = store.run("admin/lock_take", lock="index", owner="other-process", holder=other, ttl_ms=600_000, **away)
        assert taken[0]["taken"]
        with pytest.raises(IndexBusy, match="pid 4242 on elsewhere"):
            eng.documents.add(text="Captain Tomas Reyes now runs the Kelmouth Ferry.")
        with pytest.raises(IndexBusy):
            eng.documents.delete(first.documents[0])
        assert [d.id for d in eng.documents.list()] == list(first.documents)
        # that process died: its lock lapses, and the next writer takes it over
        store.run("tests/lapse_lock", lock="index")
        second = eng.documents.add(text="Captain Tomas Reyes now runs the Kelmouth Ferry.")
        assert second.changed and len(eng.documents.list()) == 2
        assert store.read("tests/lock_state", lock="index")[0]["owner"] is None

    # a live holder renews its lock, so it never lapses under a long run
    with writer_lock(store, "a long test run", ttl_s=0.6):
        time.sleep(1.5)
        late = {"owner": "late", "holder": "late", "machine": "elsewhere", "pid": 1, "stale": None, "ttl_ms": 1000}
        row = store.run("admin/lock_take", lock="index", **late)[0]
        assert not row["taken"] and "a long test run" in row["holder"]
    assert store.run("admin/lock_take", lock="index", **late)[0]["taken"]


def test_a_writer_whose_lock_was_taken_stops_before_it_writes(cfg, store, fake_llm, monkeypatch):
    """Neo4j away longer than the lapse time, or a lock taken over: the run must not write beside the new holder.
    The lock is taken from under ``documents add`` while its model calls run; it stops before writing anything,
    and once the other holder is gone a re-run finishes from the call cache."""
    import threading

    from driftgraph.errors import LockLost
    from driftgraph.store import lock

    monkeypatch.setattr(lock, "LOCK_TTL_S", 0.6)  # renewed every 0.2 s: the loss is seen within the model calls
    stolen = threading.Event()
    late = {"owner": "late", "holder": "late", "machine": "elsewhere", "pid": 1, "stale": None, "ttl_ms": 600_000}

    def steal(request) -> float:
        if stolen.is_set():
            return 0.0
        stolen.set()
        for _ in range(50):  # the holder's renewal may push the lapse back between the two statements: again
            store.run("tests/lapse_lock", lock="index")
            if store.run("admin/lock_take", lock="index", **late)[0]["taken"]:
                break
        return 1.5  # this call returns after the holder's next renewals have found the lock gone

    fake_llm.delay = steal
    with Engine(cfg) as eng:
        with pytest.raises(LockLost, match="documents add stopped before writing") as caught:
            eng.documents.add(text=FERRY, title="ferry")
        assert "another writer took it" in str(caught.value)
        assert eng.documents.list() == [], "nothing was written"
        assert store.read("tests/lock_state", lock="index")[0]["owner"] == "late", "the new holder keeps its lock"
        store.run("tests/lapse_lock", lock="index")
        calls = len(fake_llm.chat_requests())
        assert eng.documents.add(text=FERRY, title="ferry").changed
        assert len(fake_llm.chat_requests()) == calls, "the re-run paid for no model call again"


def test_a_holder_on_this_machine_whose_process_is_gone_is_taken_over_at_once(cfg, store):
    import subprocess
    import sys

    from driftgraph.store.lock import machine_id

    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(gone.stdout)  # a process that ran here and exited
    for machine, pid, refused in ((machine_id(), dead_pid, False), ("another-machine", dead_pid, True)):
        store.run("admin/lock_take", lock="index", owner="crashed", holder="index docs (crashed)", machine=machine,
                  pid=pid, stale=None, ttl_ms=600_000)  # fmt: skip
        with Engine(cfg) as eng:
            if refused:  # on another machine its pid says nothing: wait for the lapse
                with pytest.raises(Exception, match="crashed"):
                    eng.documents.add(text=FERRY + " (again)")
            else:
                assert eng.documents.add(text=FERRY).changed
        store.run("tests/lapse_lock", lock="index")
