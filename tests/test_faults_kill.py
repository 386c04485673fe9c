"""kill -9 in the middle of ``import-graphrag`` and of ``index``, then a re-run: the same counts as a clean run
and no duplicate ids (every writer MERGEs on ids; the LLM cache lets the index re-run pay only for what is
left)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from driftgraph.store.db import Store
from tests.conftest import SHARED_DATA, make_config
from tests.support.cli import run_cli
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
