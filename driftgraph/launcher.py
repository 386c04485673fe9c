"""Start, stop and inspect the embedded Neo4j of jvm/launcher (for machines without Docker)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

from driftgraph import java as jvm
from driftgraph import launcher_password
from driftgraph.config import LauncherConfig
from driftgraph.errors import LauncherError
from driftgraph.java import DOCKER_HINT, Java
from driftgraph.procs import alive
from driftgraph.resources import checkout_dir

JAR = "driftgraph-neo4j-launcher-0.1.0.jar"


@dataclass(frozen=True)
class LauncherStatus:
    running: bool
    pid: int | None
    uri: str
    data_dir: str
    log: str
    browser_url: str | None = None  # Neo4j Browser, None when HTTP is off
    warning: str | None = None  # set by start() when it had to turn something off
    java: str | None = None  # what the JVM is, e.g. "Java 21.0.13, SIMD vector distances on"
    password_file: str | None = None  # where the generated password is kept (the path only, never the password)
    password_created: bool = False  # set by start() when this start generated it (a first start)


def _paths(cfg: LauncherConfig) -> tuple[Path, Path, Path]:
    data = Path(cfg.data_dir).resolve()
    return data, data / "launcher.pid", data / "launcher.log"


def _state_file(cfg: LauncherConfig) -> Path:
    """What the running launcher listens on (written at READY), so status shows the real ports."""
    return Path(cfg.data_dir).resolve() / launcher_password.STATE_FILE


def launcher_dir() -> Path:
    return checkout_dir() / "jvm" / "launcher"


def _require(tool: str) -> str:
    path = shutil.which(tool)
    if path is None:
        raise LauncherError(f"'{tool}' is not installed: building the Neo4j launcher needs Maven; {DOCKER_HINT}")
    return path


def build(force: bool = False, java: Java | None = None) -> Path:
    """``mvn package`` once, then one training start on ``java`` (default: the configured one) for its
    class-data-sharing archive (``cds_archive``); later calls reuse target/ unless the sources are newer
    than the jar."""
    java = java or jvm.find(LauncherConfig().java)
    src = launcher_dir()
    if not (src / "pom.xml").is_file():
        raise LauncherError(f"launcher sources not found at {src} (run from a driftgraph checkout); {DOCKER_HINT}")
    jar = src / "target" / JAR
    newest = max(p.stat().st_mtime for p in [src / "pom.xml", *(f for f in (src / "src").rglob("*") if f.is_file())])
    built = all((src / "target" / d).is_dir() for d in ("lib", "plugins"))
    if jar.is_file() and built and jar.stat().st_mtime >= newest and not force:
        _train_cds(jar, java)
        return jar
    mvn = _require("mvn")
    for stale in [*(src / "target").glob("launcher*.jsa"), *(src / "target").glob("launcher*.failed")]:
        stale.unlink(missing_ok=True)  # recorded against the classes about to be replaced
    proc = subprocess.run([mvn, "-q", "-B", "package", "-DskipTests"], cwd=src, capture_output=True, text=True)
    if proc.returncode != 0 or not jar.is_file():
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-15:])
        raise LauncherError(f"building the Neo4j launcher failed (mvn package in {src}):\n{tail}")
    _train_cds(jar, java)
    return jar


def cds_archive(java: Java) -> Path:
    """JVM class-data-sharing archive of the launcher's classes: a start that maps it loads ~14k of Neo4j's,
    Jetty's and APOC's classes pre-parsed and verified, which takes about a third off the JVM's start-up CPU.
    One per JVM: an archive only maps into the JVM build that wrote it."""
    key = hashlib.sha256(f"{java.path}\n{java.version}".encode()).hexdigest()[:10]
    return launcher_dir() / "target" / f"launcher-{java.feature}-{key}.jsa"


def _jvm_flags(heap: str, java: Java) -> list[str]:
    return [
        f"-Xmx{heap}",
        *java.flags(),
        "-XX:+UseSerialGC",
        # what Neo4j's own neo4j.conf opens: the page cache and Netty then use their fast paths
        "--add-opens=java.base/java.nio=ALL-UNNAMED",
        "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    ]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _train_cds(jar: Path, java: Java, timeout_s: float = 900.0) -> None:
    """Once per build: start the launcher on a throwaway data dir with ``-XX:ArchiveClassesAtExit`` and let it
    exit at READY, which writes the archive. Best effort: any failure leaves the archive's ``.failed`` note (no
    retry until the next build) and starts go on without the archive, as before."""
    archive = cds_archive(java)
    failed = archive.with_suffix(".failed")
    if archive.is_file() or failed.is_file():
        return
    tmp = archive.with_name(f"{archive.name}.{os.getpid()}.tmp")
    with tempfile.TemporaryDirectory(prefix="driftgraph-cds-") as scratch:
        bolt = _free_port()
        http = next(p for p in iter(_free_port, None) if p != bolt)
        cmd = [java.path, *_jvm_flags("512m", java), f"-XX:ArchiveClassesAtExit={tmp}", "-jar", str(jar)]
        cmd += ["--port", str(bolt), "--http-port", str(http), "--data-dir", str(Path(scratch) / "db")]
        cmd += ["--page-cache", "32m", "--exit-when-ready"]
        env = {**os.environ, "NEO4J_PASSWORD": "cds-training-run"}
        proc: subprocess.CompletedProcess[str] | OSError | subprocess.TimeoutExpired
        try:
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout_s)
            ok = proc.returncode == 0 and "READY" in proc.stdout and tmp.is_file() and tmp.stat().st_size > 0
        except (OSError, subprocess.TimeoutExpired) as e:
            proc, ok = e, False
        if ok:
            os.replace(tmp, archive)
        else:
            tmp.unlink(missing_ok=True)
            out = getattr(proc, "stdout", None) or ""
            out = out.decode(errors="replace") if isinstance(out, bytes) else out
            failed.write_text(f"{type(proc).__name__}: {getattr(proc, 'returncode', proc)}\n{out[-4000:]}")


def _read_pid(pidfile: Path) -> int | None:
    try:
        return int(pidfile.read_text().strip())
    except (OSError, ValueError):
        return None


def _port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def _browser_url(http_url: str | None) -> str | None:
    return f"{http_url}/browser/" if http_url else None


def status(cfg: LauncherConfig) -> LauncherStatus:
    data, pidfile, log = _paths(cfg)
    pid = _read_pid(pidfile)
    running = pid is not None and alive(pid)
    uri = f"bolt://127.0.0.1:{cfg.port}"
    browser = _browser_url(f"http://127.0.0.1:{cfg.http_port}" if cfg.http_port else None)
    java = None
    if running:
        try:
            state = json.loads(_state_file(cfg).read_text())
            if state.get("pid") == pid:
                uri, browser, java = state["uri"], state["browser_url"], state.get("java")
        except (OSError, ValueError, KeyError):
            pass
    else:
        browser = None
    pw = launcher_password.password_path(data)
    return LauncherStatus(
        running,
        pid if running else None,
        uri,
        str(data),
        str(log),
        browser,
        java=java,
        password_file=str(pw) if pw.is_file() else None,
    )


def parse_ready(line: str) -> tuple[str, str | None, bool]:
    """``READY bolt://127.0.0.1:P http://127.0.0.1:H auth=true`` (``http=off`` instead of the URL)."""
    parts = line.split()
    if not parts or parts[0] != "READY":
        raise ValueError(f"not a READY line: {line!r}")
    bolt = next((p for p in parts if p.startswith("bolt://")), None)
    if bolt is None:
        raise ValueError(f"READY line without a bolt:// URI: {line!r}")
    http = next((p for p in parts if p.startswith("http://")), None)
    return bolt, http, "auth=true" in parts


def _ready_line(log: Path) -> str | None:
    try:
        for line in log.read_text(errors="replace").splitlines():
            if line.startswith("READY"):
                return line
    except OSError:
        pass
    return None


def _tail(log: Path, n: int = 15) -> str:
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return "(no log)"


def _login_password(cfg: LauncherConfig, explicit: str | None) -> tuple[str, bool]:
    """The password this start sets, and whether it was generated now. An explicit one (NEO4J_PASSWORD or
    ``neo4j.password``) wins; a stored one it replaces is removed, since it would no longer log in."""
    if not explicit:
        return launcher_password.create(cfg.data_dir)
    stored = launcher_password.read(cfg.data_dir)
    if stored is not None and stored != explicit:
        launcher_password.password_path(cfg.data_dir).unlink(missing_ok=True)
    return explicit, False


def start(cfg: LauncherConfig, password: str | None = None, *, strict_http: bool = False) -> LauncherStatus:
    """Start in the background and wait until it prints READY (Bolt and HTTP accept connections).

    ``password`` unset or empty: the one stored in the data directory, generated and stored (0600) on its
    first start (``status().password_file`` says where). Bolt listens only once the ``neo4j`` user has the
    password (the launcher sets it while Neo4j starts), so a client that connects early sees connection
    refused, never an authentication failure.
    ``cfg.http_port`` (Neo4j Browser) already in use: HTTP is turned off with a warning in the returned
    status, or, with ``strict_http`` (the port was asked for explicitly), it is an error.
    """
    current = status(cfg)
    if current.running:
        if not password and current.password_file is None:
            unknown = "it was started with a password that is not stored here (NEO4J_PASSWORD at its start): "
            unknown += "set NEO4J_PASSWORD, or restart it (driftgraph neo4j stop, then start) to generate one"
            return replace(current, warning=unknown)
        return current
    if _port_open(cfg.port):
        raise LauncherError(f"port {cfg.port} on 127.0.0.1 is already in use by another process")
    http_port, warning = cfg.http_port, None
    if http_port == cfg.port:
        raise LauncherError(f"the HTTP port must differ from the Bolt port ({cfg.port}); 0 turns HTTP off")
    if http_port and _port_open(http_port):
        if strict_http:
            raise LauncherError(
                f"HTTP port {http_port} on 127.0.0.1 is already in use by another process "
                "(pick another with --http-port N, or --http-port 0 for no Browser)"
            )
        warning = (
            f"HTTP port {http_port} on 127.0.0.1 is in use: Neo4j Browser is off for this launcher "
            "(pick another with --http-port N)"
        )
        http_port = 0
    java = jvm.find(cfg.java)
    warning = "; ".join(w for w in (warning, java.warning()) if w) or None
    jar = build(java=java)
    data, pidfile, log = _paths(cfg)
    data.mkdir(parents=True, exist_ok=True)
    _state_file(cfg).unlink(missing_ok=True)
    password, created = _login_password(cfg, password)
    env = {**os.environ, "NEO4J_PASSWORD": password}  # the environment, not argv: never visible in ps
    # an archive the JVM cannot use (a jar changed since) is ignored by the JVM itself (-Xshare:auto)
    cds = [f"-XX:SharedArchiveFile={cds_archive(java)}"] if cds_archive(java).is_file() else []
    cmd = [
        java.path,
        *_jvm_flags(cfg.heap, java),
        *cds,
        "-jar",
        str(jar),
        "--port",
        str(cfg.port),
        "--http-port",
        str(http_port),
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
        line = _ready_line(log)
        if line is not None:
            uri, http, _ = parse_ready(line)
            state = {"pid": proc.pid, "uri": uri, "browser_url": _browser_url(http), "java": java.describe()}
            _state_file(cfg).write_text(json.dumps(state))
            st = status(cfg)
            return replace(
                st,
                uri=uri,
                browser_url=_browser_url(http),
                warning=warning,
                java=java.describe(),
                password_created=created,
            )
        time.sleep(0.2)
    stop(cfg)
    raise LauncherError(f"Neo4j did not become ready within {cfg.start_timeout_s:.0f}s; last log lines:\n{_tail(log)}")


def stop(cfg: LauncherConfig, timeout_s: float = 60.0) -> bool:
    """SIGTERM (clean shutdown), then SIGKILL after ``timeout_s``. False when nothing was running."""
    _, pidfile, _ = _paths(cfg)
    pid = _read_pid(pidfile)
    if pid is None or not alive(pid):
        pidfile.unlink(missing_ok=True)
        return False
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    if alive(pid):
        os.kill(pid, signal.SIGKILL)
    pidfile.unlink(missing_ok=True)
    _state_file(cfg).unlink(missing_ok=True)
    return True
