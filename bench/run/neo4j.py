"""The Neo4j the bench runs against: a given URI, or driftgraph's embedded launcher started for the run."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from bench.paths import CACHE

DEFAULT_PORT = 7799
PASSWORD = "driftgraph-bench"


@dataclass
class Database:
    uri: str
    password: str
    pid: int | None  # the launcher's JVM when the bench started it


def proc_rss_mb(pid: int | None) -> float | None:
    if pid is None:
        return None
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def _launcher_cfg(port: int, data_dir: Path, heap: str, page_cache: str, java: str = ""):
    from driftgraph.config import LauncherConfig

    return LauncherConfig(
        port=port, data_dir=str(data_dir), heap=heap, page_cache=page_cache, start_timeout_s=300, java=java
    )


@contextmanager
def database(uri: str | None, port: int, heap: str, page_cache: str, log=print, java: str = "") -> Iterator[Database]:
    """``uri`` given: use it (password from NEO4J_PASSWORD). Else start the launcher on ``java`` (empty: the
    launcher's own lookup), stop it afterwards."""
    if uri:
        yield Database(uri, os.environ.get("NEO4J_PASSWORD", PASSWORD), None)
        return
    from driftgraph import launcher

    cfg = _launcher_cfg(port, CACHE / "neo4j", heap, page_cache, java)
    st = launcher.status(cfg)
    started = not st.running
    if started:
        # the bench's database is disposable: start from an empty one every time (this also sidesteps the
        # launcher refusing to re-apply an unchanged password to an existing data dir)
        shutil.rmtree(CACHE / "neo4j" / "db", ignore_errors=True)
        log(f"starting Neo4j (embedded launcher) on port {port}, heap {heap}, page cache {page_cache}")
        st = launcher.start(cfg, PASSWORD)
        log(f"Neo4j runs on {st.java}")
    try:
        yield Database(st.uri, PASSWORD, st.pid)
    finally:
        if started:
            launcher.stop(cfg)


def cold_start(port: int, heap: str, page_cache: str) -> dict:
    """Start the launcher on an empty data dir: seconds until Bolt is READY, then the JVM's RSS; stop it."""
    from driftgraph import launcher

    launcher.build()  # a one-time Maven build is not part of a cold start
    tmp = Path(tempfile.mkdtemp(prefix="bench-neo4j-"))
    cfg = _launcher_cfg(port, tmp, heap, page_cache)
    try:
        t0 = time.perf_counter()
        st = launcher.start(cfg, PASSWORD)
        seconds = time.perf_counter() - t0
        time.sleep(1.0)
        rss = proc_rss_mb(st.pid)
        t0 = time.perf_counter()
        launcher.stop(cfg)
        return {"start_s": seconds, "rss_mb": rss, "stop_s": time.perf_counter() - t0}
    finally:
        launcher.stop(cfg)
        shutil.rmtree(tmp, ignore_errors=True)
