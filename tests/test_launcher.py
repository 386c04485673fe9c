"""The jvm/launcher: a second embedded Neo4j on free ports, started and stopped like a user would."""

import base64
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from driftgraph import java, launcher
from driftgraph.config import LauncherConfig

PASSWORD = "launcher-test-pw"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _two_free_ports() -> tuple[int, int]:
    while True:
        bolt, http = _free_port(), _free_port()
        if bolt != http:
            return bolt, http


def _listen_addresses(port: int) -> set[str]:
    """The local addresses of the sockets in LISTEN state on ``port`` (from /proc, no traffic)."""
    found = set()
    for name in ("tcp", "tcp6"):
        try:
            lines = Path(f"/proc/net/{name}").read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            local, state = line.split()[1], line.split()[3]
            addr, hexport = local.split(":")
            if state != "0A" or int(hexport, 16) != port:
                continue
            if name == "tcp":
                found.add(socket.inet_ntoa(bytes.fromhex(addr)[::-1]))
            else:  # four little-endian 32-bit words
                raw = b"".join(bytes.fromhex(addr[i : i + 8])[::-1] for i in range(0, 32, 8))
                v6 = socket.inet_ntop(socket.AF_INET6, raw)
                found.add(v6.removeprefix("::ffff:"))
    return found


class Hammer(threading.Thread):
    """Connects and runs ``RETURN 1`` with the right password, over and over, and records what happened."""

    def __init__(self, uri: str, password: str, deadline_s: float = 400.0) -> None:
        super().__init__(daemon=True)
        self.uri, self.password, self.deadline = uri, password, time.monotonic() + deadline_s
        self.outcomes: list[str] = []  # "refused", "ok", or the error's class and message
        self.stop_after_ok = 5
        self.halt = threading.Event()

    def run(self) -> None:
        from neo4j import GraphDatabase
        from neo4j.exceptions import ServiceUnavailable

        oks = 0
        while not self.halt.is_set() and time.monotonic() < self.deadline and oks < self.stop_after_ok:
            try:
                with (
                    GraphDatabase.driver(self.uri, auth=("neo4j", self.password), connection_timeout=2) as driver,
                    driver.session() as session,
                ):
                    assert session.run("RETURN 1 AS one").single()["one"] == 1
                self.outcomes.append("ok")
                oks += 1
            except ServiceUnavailable as e:
                refused = isinstance(e.__cause__, ConnectionRefusedError) or "refused" in str(e).lower()
                self.outcomes.append("refused" if refused else f"ServiceUnavailable: {e}")
                time.sleep(0.1)
            except Exception as e:  # AuthError, ClientError(AuthenticationRateLimit), ...
                self.outcomes.append(f"{type(e).__name__}: {e}")
                time.sleep(0.1)

    def problems(self) -> list[str]:
        return [o for o in self.outcomes if o not in ("refused", "ok")]


def _start_hammered(cfg: LauncherConfig, password: str) -> tuple[launcher.LauncherStatus, Hammer]:
    """launcher.start while a thread hammers Bolt; returns once the thread saw a few successes."""
    hammer = Hammer(f"bolt://127.0.0.1:{cfg.port}", password)
    hammer.start()
    try:
        st = launcher.start(cfg, password, strict_http=True)
    finally:
        hammer.join(timeout=60)
        hammer.halt.set()
    return st, hammer


def _assert_never_unauthorised(hammer: Hammer) -> None:
    assert not hammer.problems(), f"a client saw errors while Neo4j started: {hammer.problems()[:5]}"
    assert "ok" in hammer.outcomes
    first_ok = hammer.outcomes.index("ok")
    assert "refused" not in hammer.outcomes[first_ok:], "Bolt went away again after the first success"


@pytest.fixture(scope="module")
def running(tmp_path_factory):
    """One launcher for the HTTP/APOC tests, started on an empty data dir while a client hammers Bolt."""
    bolt, http = _two_free_ports()
    cfg = LauncherConfig(
        port=bolt, http_port=http, data_dir=str(tmp_path_factory.mktemp("n4j")), heap="512m", page_cache="64m"
    )
    st, hammer = _start_hammered(cfg, PASSWORD)
    try:
        yield cfg, st, hammer
    finally:
        launcher.stop(cfg)


@pytest.mark.neo4j
def test_bolt_listens_only_once_the_password_is_set(running):
    _, _, hammer = running
    _assert_never_unauthorised(hammer)


@pytest.mark.neo4j
def test_browser_is_served_and_discovery_names_the_bolt_uri(running):
    cfg, st, _ = running
    assert st.browser_url == f"http://127.0.0.1:{cfg.http_port}/browser/"
    with urllib.request.urlopen(st.browser_url, timeout=30) as resp:
        assert resp.status == 200
        html = resp.read().decode("utf-8", "replace")
    assert "<title>Neo4j Browser</title>" in html
    req = urllib.request.Request(f"http://127.0.0.1:{cfg.http_port}/", headers={"Accept": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        discovery = json.loads(resp.read())
    assert discovery["bolt_direct"] == st.uri == f"bolt://127.0.0.1:{cfg.port}"
    assert discovery["neo4j_version"].startswith("5.26")
    # both connectors on loopback only
    assert _listen_addresses(cfg.port) == {"127.0.0.1"}
    assert _listen_addresses(cfg.http_port) == {"127.0.0.1"}


@pytest.mark.neo4j
def test_http_api_has_the_same_auth_as_bolt(running):
    cfg, _, _ = running
    body = json.dumps({"statements": [{"statement": "RETURN 1 AS one"}]}).encode()

    def post(password: str) -> int:
        req = urllib.request.Request(f"http://127.0.0.1:{cfg.http_port}/db/neo4j/tx/commit", data=body)
        req.add_header("Content-Type", "application/json")
        req.add_header("Authorization", "Basic " + base64.b64encode(f"neo4j:{password}".encode()).decode())
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                return resp.status
        except urllib.error.HTTPError as e:
            return e.code

    assert post(PASSWORD) == 200
    assert post("not-the-password") == 401


def _preflight(url: str, origin: str) -> dict[str, str]:
    req = urllib.request.Request(url, method="OPTIONS")
    req.add_header("Origin", origin)
    req.add_header("Access-Control-Request-Method", "POST")
    req.add_header("Access-Control-Request-Headers", "authorization, content-type")
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return {k.lower(): v for k, v in resp.headers.items()}
    except urllib.error.HTTPError as e:
        return {k.lower(): v for k, v in e.headers.items()}


@pytest.mark.neo4j
def test_http_api_grants_no_other_origin_by_cors(running):
    """A page on another origin may not send Cypher with the password: the preflight (what a browser asks before
    a POST carrying Authorization) grants only the Browser's own origin, never ``*`` nor the caller."""
    cfg, _, _ = running
    own = f"http://127.0.0.1:{cfg.http_port}"
    for path in ("/db/neo4j/tx/commit", "/"):
        headers = _preflight(own + path, "https://evil.example")
        granted = headers.get("access-control-allow-origin")
        assert granted != "*" and granted != "https://evil.example", (path, headers)
        assert granted in (None, own), (path, headers)
    # the same-origin Browser still works: its own origin is the one granted
    assert _preflight(own + "/db/neo4j/tx/commit", own).get("access-control-allow-origin") == own


@pytest.mark.neo4j
def test_apoc_core_and_the_builtin_procedures(running):
    from neo4j import GraphDatabase

    _, st, _ = running
    with GraphDatabase.driver(st.uri, auth=("neo4j", PASSWORD)) as driver:

        def q(cypher: str, **params):
            return driver.execute_query(cypher, params).records

        assert q("RETURN apoc.version() AS v")[0]["v"].startswith("5.26")
        q("CREATE (:LT {name: 'a alpha', e: [1.0, 0.0, 0.0]}), (:LT {name: 'b beta', e: [0.0, 1.0, 0.0]})")
        merge = (
            "MATCH (a:LT {name: 'a alpha'}), (b:LT {name: 'b beta'}) "
            "CALL apoc.merge.relationship(a, 'LINKS', {key: 1}, {created: true}, b, {seen: true}) YIELD rel "
            "RETURN type(rel) AS t, rel.key AS key"
        )
        assert [(r["t"], r["key"]) for r in q(merge)] == [("LINKS", 1)]
        q(merge)  # merging again finds the same relationship
        assert q("MATCH (:LT)-[r:LINKS]->(:LT) RETURN count(r) AS n")[0]["n"] == 1
        # built-ins stay callable next to APOC (no allowlist hides them)
        assert q("CALL dbms.components() YIELD name RETURN name")[0]["name"] == "Neo4j Kernel"
        q(
            "CREATE VECTOR INDEX lt_vec IF NOT EXISTS FOR (n:LT) ON n.e OPTIONS {indexConfig: "
            "{`vector.dimensions`: 3, `vector.similarity_function`: 'cosine'}}"
        )
        q("CREATE FULLTEXT INDEX lt_ft IF NOT EXISTS FOR (n:LT) ON EACH [n.name]")
        q("CALL db.awaitIndexes(300)")
        vec = q("CALL db.index.vector.queryNodes('lt_vec', 1, [1.0, 0.1, 0.0]) YIELD node RETURN node.name AS n")
        assert [r["n"] for r in vec] == ["a alpha"]
        ft = q("CALL db.index.fulltext.queryNodes('lt_ft', 'beta') YIELD node RETURN node.name AS n")
        assert [r["n"] for r in ft] == ["b beta"]


@pytest.mark.neo4j
def test_cli_status_shows_the_browser_url(running, tmp_path):
    cfg, st, _ = running
    args = [sys.executable, "-m", "driftgraph", "neo4j", "status", "--data-dir", cfg.data_dir, "--port", str(cfg.port)]
    res = subprocess.run([*args, "--json"], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["running"] is True and data["uri"] == st.uri
    assert data["browser_url"] == f"http://127.0.0.1:{cfg.http_port}/browser/"
    res = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert res.returncode == 0 and data["browser_url"] in res.stdout


@pytest.mark.neo4j
def test_start_status_stop_with_password(tmp_path):
    from neo4j import GraphDatabase

    bolt, http = _two_free_ports()
    cfg = LauncherConfig(port=bolt, http_port=http, data_dir=str(tmp_path / "n4j"), heap="512m", page_cache="64m")
    with socket.socket() as busy:
        # The HTTP port is taken (say 7474 by another launcher): asked for explicitly, that is an error...
        busy.bind(("127.0.0.1", http))
        busy.listen()
        with pytest.raises(launcher.LauncherError, match=f"HTTP port {http}.*in use"):
            launcher.start(cfg, PASSWORD, strict_http=True)
        # ...from the configuration, the launcher starts with the Browser off and says so.
        st = launcher.start(cfg, PASSWORD)
    try:
        assert st.running and st.pid
        assert st.browser_url is None and st.warning and f"HTTP port {http}" in st.warning
        # start and status name the JVM it runs on
        assert st.java == java.find(cfg.java).describe() and launcher.status(cfg).java == st.java
        assert launcher.status(cfg).running and launcher.status(cfg).browser_url is None
        with GraphDatabase.driver(st.uri, auth=("neo4j", PASSWORD)) as driver:
            driver.verify_connectivity()
            assert driver.execute_query("RETURN 1 AS one").records[0]["one"] == 1
        with (
            GraphDatabase.driver(st.uri, auth=("neo4j", "not-the-password")) as driver,
            pytest.raises(Exception, match="(?i)unauthori[sz]ed|authentication"),
        ):
            driver.verify_connectivity()
        # Bolt listens on loopback only.
        assert _listen_addresses(cfg.port) == {"127.0.0.1"}
        # The build recorded a class-data-sharing archive, and the JVM maps it.
        archive = launcher.cds_archive(java.find(cfg.java))
        failed = archive.with_suffix(".failed")
        assert archive.is_file(), failed.read_text() if failed.is_file() else "no CDS archive and no failure note"
        assert str(archive) in Path(f"/proc/{st.pid}/maps").read_text()
    finally:
        assert launcher.stop(cfg) is True
    assert not launcher.status(cfg).running
    assert launcher.stop(cfg) is False
    # A restart on the same data dir with the same password keeps the data and the password, and a client
    # connecting meanwhile again never sees an authentication failure. The HTTP port is free now.
    st, hammer = _start_hammered(cfg, PASSWORD)
    try:
        _assert_never_unauthorised(hammer)
        assert st.browser_url == f"http://127.0.0.1:{http}/browser/" and st.warning is None
        assert launcher.status(cfg).browser_url == st.browser_url
    finally:
        assert launcher.stop(cfg) is True


def test_parse_ready_line():
    assert launcher.parse_ready("READY bolt://127.0.0.1:7791 http://127.0.0.1:7492 auth=true") == (
        "bolt://127.0.0.1:7791",
        "http://127.0.0.1:7492",
        True,
    )
    assert launcher.parse_ready("READY bolt://127.0.0.1:7791 http=off auth=false") == (
        "bolt://127.0.0.1:7791",
        None,
        False,
    )
    # the launcher of before (Bolt only) still parses
    assert launcher.parse_ready("READY bolt://127.0.0.1:7687 auth=true") == ("bolt://127.0.0.1:7687", None, True)


def test_missing_java_names_it_and_points_at_docker(tmp_path):
    env = {**{k: v for k, v in os.environ.items() if k != "JAVA_HOME"}, "PATH": str(tmp_path)}
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "driftgraph",
            "neo4j",
            "start",
            "--port",
            str(_free_port()),
            "--http-port",
            "0",
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


@pytest.mark.neo4j
def test_doctor_prints_the_browser_url(running, tmp_path):
    cfg, st, _ = running
    env = {**os.environ, "NEO4J_URI": st.uri, "NEO4J_PASSWORD": PASSWORD}
    args = [sys.executable, "-m", "driftgraph", "doctor"]
    res = subprocess.run([*args, "--json"], cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env)
    report = json.loads(res.stdout)
    assert report["neo4j"]["ok"] and report["neo4j"]["browser"] == st.browser_url
    text = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env)
    assert f"browser={st.browser_url}" in text.stdout


def test_the_jvm_gets_the_vector_module_only_where_lucene_uses_it():
    j21, j17 = java.Java("/j/java", "21.0.2", 21), java.Java("/j/java", "17.0.9", 17)
    flags21 = launcher._jvm_flags("1g", j21)
    assert flags21[:3] == ["-Xmx1g", "--add-modules", "jdk.incubator.vector"]
    assert "jdk.incubator.vector" not in launcher._jvm_flags("1g", j17)
    # one class-data-sharing archive per JVM: the two never share a file
    assert launcher.cds_archive(j21) != launcher.cds_archive(j17)
    assert launcher.cds_archive(j21) != launcher.cds_archive(java.Java("/other/java", "21.0.2", 21))


# -- the generated password (issue 36: no published default) ------------------------------------------------


def test_password_file_is_created_owner_only_once(tmp_path, monkeypatch):
    """Created with mode 0600 at open (O_EXCL), whatever the umask, so it is never readable by others, even for
    the moment between creating and narrowing it; a second call reuses it."""
    from driftgraph import launcher_password

    opened: list[tuple[str, int, int]] = []
    real_open = os.open

    def spy(path, flags, mode=0o777, *args, **kwargs):
        if str(tmp_path) in str(path):
            opened.append((str(path), flags, mode))
        return real_open(path, flags, mode, *args, **kwargs)

    monkeypatch.setattr(os, "open", spy)
    old_umask = os.umask(0)  # the widest: a file created without an explicit mode would be world-readable
    try:
        password, created = launcher_password.create(tmp_path / "d")
    finally:
        os.umask(old_umask)
    path = launcher_password.password_path(tmp_path / "d")
    assert created and path.read_text().strip() == password
    assert path.stat().st_mode & 0o777 == 0o600
    assert opened and all(flags & os.O_EXCL and mode == 0o600 for _, flags, mode in opened), opened
    assert password != "driftgraph" and len(password) >= 24
    assert sorted(p.name for p in path.parent.iterdir()) == [path.name]  # no temp file left behind
    assert launcher_password.create(tmp_path / "d") == (password, False)
    assert launcher_password.create(tmp_path / "other")[0] != password


def test_the_stored_password_goes_only_to_the_launchers_own_uri(tmp_path, monkeypatch):
    from driftgraph import launcher_password
    from driftgraph.config import load_config

    data = tmp_path / "n4j"
    password, _ = launcher_password.create(data)
    for uri in ("bolt://127.0.0.1:7751", "neo4j://localhost:7751"):
        assert launcher_password.for_uri(uri, 7751, data) == password, uri
    for uri in ("bolt://127.0.0.1:7752", "bolt://db.example:7751", "neo4j+s://127.0.0.1:7751", "bolt://[::1:x"):
        assert launcher_password.for_uri(uri, 7751, data) is None, uri
    # started with --port on another port: the port it runs on (launcher.json) counts too
    (data / launcher_password.STATE_FILE).write_text(json.dumps({"pid": 1, "uri": "bolt://127.0.0.1:7753"}))
    assert launcher_password.for_uri("bolt://127.0.0.1:7753", 7751, data) == password

    monkeypatch.chdir(tmp_path)
    (tmp_path / "driftgraph.yaml").write_text(f"neo4j:\n  launcher:\n    port: 7751\n    data_dir: {data}\n")
    own = {"NEO4J_URI": "bolt://127.0.0.1:7751"}
    assert load_config(env=own).neo4j.password == password
    assert load_config(env={**own, "NEO4J_PASSWORD": "mine-12345"}).neo4j.password == "mine-12345"
    assert load_config(env=own, launcher_password=False).neo4j.password == ""
    assert load_config(env={"NEO4J_URI": "bolt://127.0.0.1:7687"}).neo4j.password == ""


def _cli(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in ("NEO4J_PASSWORD", "NEO4J_URI")}
    cmd = [sys.executable, "-m", "driftgraph", *args]
    return subprocess.run(cmd, cwd=cwd, env={**base, **env}, capture_output=True, text=True, timeout=400)


def _logs_in(uri: str, password: str) -> bool:
    from neo4j import GraphDatabase
    from neo4j.exceptions import AuthError

    try:
        with GraphDatabase.driver(uri, auth=("neo4j", password)) as driver:
            driver.verify_connectivity()
        return True
    except AuthError:
        return False


@pytest.mark.neo4j
def test_first_start_generates_the_password_and_driftgraph_reads_it(tmp_path):
    """No NEO4J_PASSWORD: the first start generates one into the data dir (0600) and says where, status names
    the file and never the password, doctor logs in with it, a restart reuses it; NEO4J_PASSWORD still wins."""
    from driftgraph import launcher_password

    port, data = _free_port(), tmp_path / "n4j"
    where = ["--port", str(port), "--data-dir", str(data)]
    uri = f"bolt://127.0.0.1:{port}"
    res = _cli(["neo4j", "start", "--http-port", "0", *where], tmp_path)
    try:
        assert res.returncode == 0, res.stderr
        path = launcher_password.password_path(data)
        password = path.read_text().strip()
        assert path.stat().st_mode & 0o777 == 0o600 and password != "driftgraph"
        assert f"generated a password for user neo4j (first start of this data directory), kept in {path}" in res.stdout
        status = _cli(["neo4j", "status", *where], tmp_path)
        status_json = _cli(["neo4j", "status", "--json", *where], tmp_path)
        for out in (res, status, status_json):
            assert password not in out.stdout + out.stderr
        assert status.returncode == 0 and f"password in {path}" in status.stdout
        assert json.loads(status_json.stdout)["password_file"] == str(path)
        assert _logs_in(uri, password) and not _logs_in(uri, "driftgraph")
        # driftgraph itself, with NEO4J_PASSWORD unset: the configured data dir's file, on the port it runs on
        (tmp_path / "driftgraph.yaml").write_text(f"neo4j:\n  launcher:\n    data_dir: {data}\n")
        doctor = _cli(["doctor", "--json"], tmp_path, NEO4J_URI=uri)
        assert json.loads(doctor.stdout)["neo4j"]["ok"], doctor.stdout + doctor.stderr

        # a second start reuses the stored password and generates none
        assert _cli(["neo4j", "stop", *where], tmp_path).returncode == 0
        again = _cli(["neo4j", "start", "--http-port", "0", *where], tmp_path)
        assert again.returncode == 0 and "generated" not in again.stdout, again.stdout + again.stderr
        assert path.read_text().strip() == password and _logs_in(uri, password)

        # NEO4J_PASSWORD wins: it is the one set, and the stored one (which no longer logs in) is removed
        assert _cli(["neo4j", "stop", *where], tmp_path).returncode == 0
        mine = _cli(["neo4j", "start", "--http-port", "0", *where], tmp_path, NEO4J_PASSWORD="explicit-pw-123")
        assert mine.returncode == 0, mine.stderr
        assert _logs_in(uri, "explicit-pw-123") and not _logs_in(uri, password)
        assert not path.exists() and "password not stored" in _cli(["neo4j", "status", *where], tmp_path).stdout
        # a start without it while that one runs cannot know its password, and says so
        blind = _cli(["neo4j", "start", *where], tmp_path)
        assert blind.returncode == 0 and "not stored here" in blind.stderr and not path.exists()
    finally:
        _cli(["neo4j", "stop", *where], tmp_path)
