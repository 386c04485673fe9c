"""The jvm/launcher: a second embedded Neo4j on a free port, started and stopped like a user would."""

import os
import socket
import subprocess
import sys

import pytest

from driftgraph import launcher
from driftgraph.config import LauncherConfig


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.neo4j
def test_start_status_stop_with_password(tmp_path):
    from neo4j import GraphDatabase

    cfg = LauncherConfig(port=_free_port(), data_dir=str(tmp_path / "n4j"), heap="512m", page_cache="64m")
    st = launcher.start(cfg, "launcher-test-pw")
    try:
        assert st.running and st.pid
        assert launcher.status(cfg).running
        with GraphDatabase.driver(st.uri, auth=("neo4j", "launcher-test-pw")) as driver:
            driver.verify_connectivity()
            assert driver.execute_query("RETURN 1 AS one").records[0]["one"] == 1
        with (
            GraphDatabase.driver(st.uri, auth=("neo4j", "not-the-password")) as driver,
            pytest.raises(Exception, match="(?i)unauthori[sz]ed|authentication"),
        ):
            driver.verify_connectivity()
        # Bolt listens on loopback only.
        assert "127.0.0.1" in st.uri
    finally:
        assert launcher.stop(cfg) is True
    assert not launcher.status(cfg).running
    assert launcher.stop(cfg) is False
    # A restart on the same data dir with the same password keeps the data and the password.
    st = launcher.start(cfg, "launcher-test-pw")
    try:
        with GraphDatabase.driver(st.uri, auth=("neo4j", "launcher-test-pw")) as driver:
            driver.verify_connectivity()
    finally:
        assert launcher.stop(cfg) is True


def test_missing_java_names_it_and_points_at_docker(tmp_path):
    env = {**os.environ, "PATH": str(tmp_path)}
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "driftgraph",
            "neo4j",
            "start",
            "--port",
            str(_free_port()),
            "--data-dir",
            str(tmp_path / "d"),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert res.returncode != 0
    assert ("'java'" in res.stderr or "'mvn'" in res.stderr) and "docker/compose.yml" in res.stderr
