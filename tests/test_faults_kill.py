"""kill -9 in the middle of ``import-graphrag`` and of ``index``, then a re-run: the same counts as a clean run
and no duplicate ids (every writer MERGEs on ids; the LLM cache lets the index re-run pay only for what is
left).

The index is also killed in the middle of its graph write, at five points (before the first entity, among
the entities, the relationships, the communities, the reports), each reached without anything in the
product knowing: the test keeps a transaction open that holds a lock the index needs next (an id it will
MERGE, taken on the unique constraint, or a node it committed and will link or update), sees the index wait
on it (``SHOW TRANSACTIONS``), reads what was committed and kills it there. The re-run must leave exactly
what a clean run on an empty database leaves.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from driftgraph.store.db import Store
from tests.conftest import SHARED_DATA, make_config
from tests.support.cli import run_cli
from tests.support.cypher import q
from tests.support.faults import EXAMPLES, INDEX
from tests.support.index_responder import responder

pytestmark = pytest.mark.e2e


def counts(neo4j: dict) -> dict[str, int]:
    with Store(make_config(neo4j).neo4j) as store:
        row = store.read("admin/counts")[0]
        dup = store.read("admin/duplicate_ids")[0]["duplicates"]
    return {**{k: int(v) for k, v in row.items() if k != "retrievals"}, "duplicate_ids": int(dup)}


def _start(args: list[str], neo4j: dict, fake: Any, cwd: Path) -> subprocess.Popen:
    env = {**os.environ, "NEO4J_URI": neo4j["uri"], "NEO4J_PASSWORD": neo4j["password"]}
    env |= {"OPENAI_BASE_URL": fake.base_url, "OPENAI_API_KEY": "test"}
    return subprocess.Popen(
        [sys.executable, "-m", "driftgraph", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def _kill_when(proc: subprocess.Popen, ready: Any, timeout: float = 240) -> bool:
    """SIGKILL once ``ready()`` holds; False when the process finished first (the test then proves less)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        if ready():
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            return True
        time.sleep(0.05)
    proc.wait()
    return False


def test_kill_during_import_then_rerun(neo4j_cfg, neo4j_config, fake_llm, tmp_path):
    dulce = SHARED_DATA / "operation-dulce"
    if not dulce.is_dir():
        pytest.skip("shared data missing")
    proc = _start(["import-graphrag", str(dulce)], neo4j_config, fake_llm, tmp_path)
    killed = _kill_when(proc, lambda: counts(neo4j_config)["entities"] > 0)
    assert killed, "the import finished before it could be killed"
    at_kill = counts(neo4j_config)
    rerun = run_cli(["import-graphrag", str(dulce), "--json"], neo4j_config, fake_llm, tmp_path)
    assert rerun.returncode == 0, rerun.stderr
    after = counts(neo4j_config)
    expected = {"documents": 1, "chunks": 5, "entities": 39, "communities": 10, "claims": 41, "relationships": 107}
    assert after == {**expected, "duplicate_ids": 0}, (at_kill, after)


def test_kill_during_index_then_rerun(neo4j_cfg, neo4j_config, fake_llm, tmp_path):
    fake_llm.responder = responder
    docs = tmp_path / "docs"
    shutil.copytree(EXAMPLES, docs)
    (tmp_path / "driftgraph.yaml").write_text(json.dumps({"index": {**INDEX, "cache_dir": str(tmp_path / "cache")}}))
    proc = _start(["index", str(docs)], neo4j_config, fake_llm, tmp_path)
    killed = _kill_when(proc, lambda: len(fake_llm.chat_requests()) >= 3)
    assert killed, "the index finished before it could be killed"
    rerun = run_cli(["index", str(docs), "--json"], neo4j_config, fake_llm, tmp_path)
    assert rerun.returncode == 0, rerun.stderr
    after = counts(neo4j_config)
    # a clean run on an empty database (same cache, same deterministic model) is the reference
    with Store(make_config(neo4j_config).neo4j) as store:
        store.run_auto("admin/reset")
        store.run_auto("admin/drop_schema")
    clean = run_cli(["index", str(docs), "--json"], neo4j_config, fake_llm, tmp_path)
    assert clean.returncode == 0, clean.stderr
    assert after == counts(neo4j_config) and after["duplicate_ids"] == 0 and after["entities"] > 0


# One row per write transaction: the graph write is a long run of commits, and a first run writes the
# entities, relationships and communities in their numbering order.
WRITE_INDEX = {**INDEX, "write_batch_size": 1}
# What a run leaves, read back whole: every label and relationship type counted, every item's id, number and
# links; a re-run after the kill must leave exactly what a clean run does.
SNAPSHOT = {
    "labels": "MATCH (n) UNWIND labels(n) AS label RETURN label, count(*) AS n ORDER BY label",
    "types": "MATCH ()-[r]->() RETURN type(r) AS type, count(*) AS n ORDER BY type",
    "documents": "MATCH (d:Document) RETURN d.id AS id, d.human_readable_id AS number ORDER BY id",
    "chunks": """
        MATCH (c:Chunk)-[:PART_OF]->(d:Document) OPTIONAL MATCH (c)-[:NEXT_CHUNK]->(n:Chunk)
        RETURN c.id AS id, c.human_readable_id AS number, d.id AS document, n.id AS next,
               c.embedding IS NOT NULL AS embedded ORDER BY id""",
    "entities": """
        MATCH (e:__Entity__) OPTIONAL MATCH (c:Chunk)-[:HAS_ENTITY]->(e)
        WITH e, c ORDER BY c.id
        RETURN e.id AS id, e.title AS title, e.type AS type, e.description AS description,
               e.human_readable_id AS number, e.degree AS degree, e.embedding IS NOT NULL AS embedded,
               collect(c.id) AS chunks ORDER BY id""",
    "relationships": """
        MATCH (s:__Entity__)-[r:RELATED]->(t:__Entity__)
        RETURN r.id AS id, s.id AS source, t.id AS target, r.weight AS weight, r.description AS description,
               r.human_readable_id AS number ORDER BY id""",
    "communities": """
        MATCH (c:__Community__) OPTIONAL MATCH (e:__Entity__)-[:IN_COMMUNITY]->(c)
        WITH c, e ORDER BY e.id
        WITH c, collect(e.id) AS members
        OPTIONAL MATCH (c)-[:PARENT]->(p:__Community__)
        RETURN c.id AS id, c.community AS number, c.level AS level, p.id AS parent, c.title AS title,
               c.full_content AS report, c.graph_basis AS graph_basis, c.report_basis AS report_basis,
               c.embedding IS NOT NULL AS embedded, members
        ORDER BY id""",
}


@dataclass(frozen=True)
class Hold:
    """A lock the test takes: it runs ``statement`` with an item's id in a transaction it keeps open, and the
    index then waits in the statement that contains ``waits_in``."""

    statement: str
    waits_in: str


# every entity's stale mentions are pruned (a read of each id) before the first entity is written
ENTITY_ID = Hold("MERGE (:__Entity__ {id: $id})", "MATCH (c:Chunk)-[h:HAS_ENTITY]->(:__Entity__ {id")
# a committed chunk: the entity that links to it first waits (the HAS_ENTITY it makes locks the chunk)
CHUNK = Hold("MATCH (c:Chunk {id: $id}) SET c.position = c.position", "MERGE (e:__Entity__ {id: row.id})")
RELATIONSHIP_ID = Hold("CREATE (:KillTestHold)-[:RELATED {id: $id}]->(:KillTestHold)", "MERGE (s)-[r:RELATED {id")
COMMUNITY_ID = Hold("MERGE (:__Community__ {id: $id})", "MERGE (c:__Community__ {id: row.id})")
# a committed community: its report is written after every community exists
REPORT = Hold(
    "MATCH (c:__Community__ {id: $id}) SET c.community = c.community",
    "MATCH (c:__Community__ {community: row.community})",
)


def snapshot(neo4j: dict) -> dict[str, list[dict]]:
    with Store(make_config(neo4j).neo4j) as store:
        return {name: q(store, text) for name, text in SNAPSHOT.items()}


def progress(neo4j: dict) -> dict[str, int]:
    """``counts`` and the communities that have their report: what is committed."""
    with Store(make_config(neo4j).neo4j) as store:
        reports = q(store, "MATCH (c:__Community__) WHERE c.full_content IS NOT NULL RETURN count(c) AS n")[0]["n"]
    return {**counts(neo4j), "reports": reports}


@contextmanager
def holding(neo4j: dict, hold: Hold, item_id: str) -> Iterator[Callable[[], None]]:
    """Runs ``hold.statement`` on ``item_id`` in a transaction left open: a writer of that item waits on its
    lock until the transaction ends. Yields the early release; it ends rolled back, leaving nothing."""
    with Store(make_config(neo4j).neo4j) as store, store._driver.session(database=store.cfg.database) as session:
        tx = session.begin_transaction()
        try:
            tx.run(hold.statement, id=item_id).consume()
            yield tx.rollback
        finally:
            if not tx.closed():
                tx.rollback()


def blocked(proc: subprocess.Popen, neo4j: dict, besides: str | None = None, timeout: float = 240) -> list[str]:
    """The statements of the transactions waiting on a lock (but not in ``besides``), once there is one, while
    ``proc`` runs; [] when it ended first or the time ran out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        with Store(make_config(neo4j).neo4j) as store:
            rows = q(store, "SHOW TRANSACTIONS YIELD currentQuery, status RETURN currentQuery, status")
        found = [r["currentQuery"] for r in rows if r["status"].startswith("Blocked")]
        found = [text for text in found if besides is None or besides not in text]
        if found:
            return found if proc.poll() is None else []
        time.sleep(0.05)
    return []


def _clean_run(neo4j: dict, fake: Any, tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    """A clean run on an empty database; returns the corpus and what the run left (the reference), then
    deletes every node (the schema stays: the next run has none to create, which could wait on a lock)."""
    fake.responder = responder
    docs = tmp_path / "docs"
    shutil.copytree(EXAMPLES, docs)
    index = {**WRITE_INDEX, "cache_dir": str(tmp_path / "cache")}
    (tmp_path / "driftgraph.yaml").write_text(json.dumps({"index": index}))
    clean = run_cli(["index", str(docs), "--json"], neo4j, fake, tmp_path)
    assert clean.returncode == 0, clean.stderr
    reference = {**snapshot(neo4j), "progress": progress(neo4j)}
    with Store(make_config(neo4j).neo4j) as store:
        store.run_auto("admin/reset")
    return docs, reference


def _in_order(reference: dict[str, Any], kind: str) -> list[dict]:
    """The items of ``kind`` in a first run's write order (its numbering order)."""
    return sorted(reference[kind], key=lambda r: r["number"])


def _plan(stop: str, reference: dict[str, Any]) -> tuple[list[tuple[Hold, str]], dict[str, int]]:
    """Where the write is stopped: the holds, each with the id it holds (a second is taken once the index waits
    on the first, which then lets go), and what the index has committed when it is killed there."""
    full = reference["progress"]
    entities = [e["id"] for e in _in_order(reference, "entities")]
    relationships = [r["id"] for r in _in_order(reference, "relationships")]
    communities = [c["id"] for c in _in_order(reference, "communities")]
    if stop == "before_entities":
        return [(ENTITY_ID, entities[0])], {"chunks": full["chunks"], "entities": 0}
    if stop == "entities":  # at the first entity found in the chunk whose first entity comes latest
        first: dict[str, int] = {}  # chunk id -> the position of the first entity linked to it
        for i, e in reversed(list(enumerate(_in_order(reference, "entities")))):
            first |= dict.fromkeys(e["chunks"], i)
        chunk = max(first, key=lambda c: first[c])
        return [(ENTITY_ID, entities[0]), (CHUNK, chunk)], {"chunks": full["chunks"], "entities": first[chunk]}
    if stop == "relationships":
        middle = len(relationships) // 2
        plan = {"entities": full["entities"], "relationships": middle, "communities": 0}
        return [(RELATIONSHIP_ID, relationships[middle])], plan
    middle = len(communities) // 2
    if stop == "communities":
        plan = {"relationships": full["relationships"], "communities": middle, "reports": 0}
        return [(COMMUNITY_ID, communities[middle])], plan
    # reports: the community write is held, then a community it committed, then the first lets go
    plan = {"communities": full["communities"], "reports": middle - 1}
    return [(COMMUNITY_ID, communities[middle]), (REPORT, communities[middle - 1])], plan


@pytest.mark.parametrize("stop", ["before_entities", "entities", "relationships", "communities", "reports"])
def test_kill_mid_graph_write_then_rerun(stop, neo4j_cfg, neo4j_config, fake_llm, tmp_path):
    """Killed with part of the graph committed and the rest not: the re-run completes the index to exactly
    what a clean run on an empty database writes (same nodes, links, numbers, communities, reports, bases)."""
    docs, reference = _clean_run(neo4j_config, fake_llm, tmp_path)
    holds, expected = _plan(stop, reference)
    proc = None
    try:
        with ExitStack() as held:
            release = held.enter_context(holding(neo4j_config, *holds[0]))
            proc = _start(["index", str(docs)], neo4j_config, fake_llm, tmp_path)
            waiting = blocked(proc, neo4j_config)
            for (before, _), (hold, item) in itertools.pairwise(holds):
                assert any(before.waits_in in text for text in waiting), waiting
                next_release = held.enter_context(holding(neo4j_config, hold, item))
                release()
                release, waiting = next_release, blocked(proc, neo4j_config, besides=before.waits_in)
            at_kill = progress(neo4j_config)  # the held items are not committed: what the index committed
            proc.send_signal(signal.SIGKILL)
            proc.wait()
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
    assert any(holds[-1][0].waits_in in text for text in waiting), waiting
    assert {k: at_kill[k] for k in expected} == expected, at_kill
    if stop in at_kill:  # in the middle of writing that kind: some committed, not all
        assert 0 < at_kill[stop] < reference["progress"][stop], at_kill
    rerun = run_cli(["index", str(docs), "--json"], neo4j_config, fake_llm, tmp_path)
    assert rerun.returncode == 0, rerun.stderr
    after: dict[str, Any] = {**snapshot(neo4j_config), "progress": progress(neo4j_config)}
    for name in reference:
        assert after[name] == reference[name], name
    assert after["progress"]["duplicate_ids"] == 0
