"""Neo4j stopped while a CLI query is in flight: exit non-zero with one line naming Neo4j and what to do; after
a restart the next query answers. The test runs its own launcher Neo4j (free port, own data dir), never the
session database the other tests share."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from driftgraph import launcher
from driftgraph.config import LauncherConfig
from tests.conftest import make_config
from tests.support import graphrag_fixture
from tests.support.cli import run_cli

pytestmark = [pytest.mark.e2e, pytest.mark.neo4j]
PASSWORD = "faults-neo4j-pw"
QUESTION = "What did Bob build?"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def own_neo4j(tmp_path: Path) -> Any:
    cfg = LauncherConfig(
        port=_free_port(), http_port=0, data_dir=str(tmp_path / "n4j"), heap="512m", page_cache="64m",
        start_timeout_s=900,
    )  # fmt: skip
    st = launcher.start(cfg, PASSWORD)
    try:
        yield cfg, {"uri": st.uri, "username": "neo4j", "password": PASSWORD, "database": "neo4j"}
    finally:
        launcher.stop(cfg)


def test_neo4j_stopped_mid_query_is_one_line_and_the_next_query_after_restart_works(own_neo4j, fake_llm, tmp_path):
    from driftgraph.api import open_engine

    cfg, neo4j = own_neo4j
    with open_engine(make_config(neo4j)) as eng:
        eng.import_graphrag(graphrag_fixture.write(tmp_path / "graphrag"), embed=True)
    stopped = threading.Event()

    def answer_after_the_stop(request: dict[str, Any]) -> float:
        stopped.wait(600)  # the model answers only once Neo4j is down
        return 0.0

    fake_llm.responder = lambda req: "Bob built engines [Data: Sources (1)]."
    fake_llm.delay = answer_after_the_stop
    env = {**os.environ, "NEO4J_URI": neo4j["uri"], "NEO4J_PASSWORD": PASSWORD}
    env |= {"OPENAI_BASE_URL": fake_llm.base_url, "OPENAI_API_KEY": "test"}
    args = [sys.executable, "-m", "driftgraph", "query", "basic", QUESTION]
    proc = subprocess.Popen(args, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        while not fake_llm.chat_requests() and proc.poll() is None:
            time.sleep(0.1)
        assert fake_llm.chat_requests(), "the query ended before it asked the model"
        assert launcher.stop(cfg) is True  # retrieval done, answer pending: the trace write finds Neo4j gone
    finally:
        stopped.set()
    out, err = proc.communicate(timeout=600)
    assert proc.returncode != 0, out
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Neo4j" in lines[0] and neo4j["uri"] in lines[0] and "driftgraph neo4j start" in lines[0], lines[0]
    assert "Traceback" not in err

    fake_llm.delay = lambda req: 0.0
    launcher.start(cfg, PASSWORD)
    again = run_cli(["query", "basic", QUESTION], neo4j, fake_llm, tmp_path)
    assert again.returncode == 0, again.stderr
    assert "Bob built engines" in again.stdout
