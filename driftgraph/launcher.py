"""Start, stop and inspect the embedded Neo4j of jvm/launcher (for machines without Docker)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from driftgraph.config import LauncherConfig
from driftgraph.errors import LauncherError
from driftgraph.resources import checkout_dir

JAR = "driftgraph-neo4j-launcher-0.1.0.jar"
DOCKER_HINT = "or run Neo4j with Docker: `docker compose -f docker/compose.yml up -d`"


@dataclass(frozen=True)
class LauncherStatus:
    running: bool
    pid: int | None
    uri: str
    data_dir: str
    log: str


def _paths(cfg: LauncherConfig) -> tuple[Path, Path, Path]:
    data = Path(cfg.data_dir).resolve()
    return data, data / "launcher.pid", data / "launcher.log"


def launcher_dir() -> Path:
    return checkout_dir() / "jvm" / "launcher"


def _require(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        raise LauncherError(f"'{tool}' is not installed: the Neo4j launcher needs Java 17+ and Maven; {DOCKER_HINT}")
    return path


def build(force: bool = False) -> Path:
    """``mvn package`` once; later calls reuse target/ unless the sources are newer than the jar."""
    src = launcher_dir()
    if not (src / "pom.xml").is_file():
        raise LauncherError(f"launcher sources not found at {src} (run from a driftgraph checkout); {DOCKER_HINT}")
    jar = src / "target" / JAR
    newest = max(p.stat().st_mtime for p in [src / "pom.xml", *src.rglob("*.java")])
    if jar.is_file() and (src / "target" / "lib").is_dir() and jar.stat().st_mtime >= newest and not force:
        return jar
    _require("java")
    mvn = _require("mvn")
    proc = subprocess.run([mvn, "-q", "-B", "package", "-DskipTests"], cwd=src, capture_output=True, text=True)
    if proc.returncode != 0 or not jar.is_file():
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        raise LauncherError(f"building the Neo4j launcher failed (mvn package in {src}):\n{tail}")
    return jar


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie child counts as gone
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return True


def _read_pid(pidfile: Path) -> int | None:
    try:
        return int(pidfile.read_text().strip())
    except (OSError, ValueError):
        return None


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def status(cfg: LauncherConfig) -> LauncherStatus:
    data, pidfile, log = _paths(cfg)
    pid = _read_pid(pidfile)
    running = pid is not None and _alive(pid)
    return LauncherStatus(running, pid if running else None, f"bolt://127.0.0.1:{cfg.port}", str(data), str(log))


def _tail(log: Path, n: int = 15) -> str:
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return "(no log)"


def start(cfg: LauncherConfig, password: str) -> LauncherStatus:
    """Start in the background and wait until it prints READY (Bolt accepts connections)."""
    current = status(cfg)
    if current.running:
        return current
    if _port_open(cfg.port):
        raise LauncherError(f"port {cfg.port} on 127.0.0.1 is already in use by another process")
    jar = build()
    java = _require("java")
    data, pidfile, log = _paths(cfg)
    data.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "NEO4J_PASSWORD": password}
    cmd = [
        java,
        f"-Xmx{cfg.heap}",
        "-XX:+UseSerialGC",
        "-jar",
        str(jar),
        "--port",
        str(cfg.port),
        "--data-dir",
        str(data / "db"),
        "--page-cache",
        cfg.page_cache,
    ]
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    pidfile.write_text(str(proc.pid))
    deadline = time.monotonic() + cfg.start_timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pidfile.unlink(missing_ok=True)
            raise LauncherError(f"Neo4j launcher exited with code {proc.returncode}; last log lines:\n{_tail(log)}")
        if "READY" in log.read_text(errors="replace"):
            return status(cfg)
        time.sleep(0.2)
    stop(cfg)
    raise LauncherError(f"Neo4j did not become ready within {cfg.start_timeout_s:.0f}s; last log lines:\n{_tail(log)}")


def stop(cfg: LauncherConfig, timeout_s: float = 60.0) -> bool:
    """SIGTERM (clean shutdown), then SIGKILL after ``timeout_s``. False when nothing was running."""
    _, pidfile, _ = _paths(cfg)
    pid = _read_pid(pidfile)
    if pid is None or not _alive(pid):
        pidfile.unlink(missing_ok=True)
        return False
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    if _alive(pid):
        os.kill(pid, signal.SIGKILL)
    pidfile.unlink(missing_ok=True)
    return True
