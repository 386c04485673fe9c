"""Which Java the launcher runs Neo4j on, and the JVM options its version earns."""

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from driftgraph import java
from driftgraph.errors import LauncherError


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _fake_java(folder: Path, version_line: str) -> Path:
    """An executable that answers ``-version`` like a JDK does (on stderr)."""
    exe = folder / "bin" / "java"
    exe.parent.mkdir(parents=True)
    exe.write_text(f"#!/bin/sh\necho '{version_line}' >&2\n")
    exe.chmod(0o755)
    return exe


def test_the_machines_java_reads_as_its_specification_version():
    path = shutil.which("java")
    assert path, "the launcher's tests need a java on PATH"
    found = java.probe(path)
    props = subprocess.run([path, "-XshowSettings:properties", "-version"], capture_output=True, text=True).stderr
    spec = next(line.split("=")[1].strip() for line in props.splitlines() if "java.specification.version" in line)
    assert found.feature == int(spec) and found.version.startswith(spec)


@pytest.mark.parametrize(
    ("line", "version", "feature"),
    [
        ('openjdk version "21.0.13" 2026-10-20', "21.0.13", 21),
        ('openjdk version "17.0.15" 2025-04-15', "17.0.15", 17),
        ('openjdk version "25.0.3" 2026-04-21 LTS', "25.0.3", 25),
        ('java version "1.8.0_402"', "1.8.0_402", 8),
        ('openjdk version "22" 2024-03-19', "22", 22),
    ],
)
def test_parse_version(line, version, feature):
    assert java.parse_version(f"{line}\nOpenJDK Runtime Environment\n") == (version, feature)


def test_only_lucenes_vector_range_gets_the_module_and_unsupported_versions_warn():
    j21, j17, j25 = (java.Java("/x/java", f"{f}.0.1", f) for f in (21, 17, 25))
    assert j21.flags() == ["--add-modules", "jdk.incubator.vector"] and j21.simd_vectors
    assert j17.flags() == [] and j25.flags() == []  # Lucene 9.11 takes the SIMD path on Java 20-22 only
    assert j21.warning() is None and j17.warning() is None
    assert j25.warning() and "Java 25.0.1" in j25.warning() and "17 and 21" in j25.warning()
    assert j21.describe() == "Java 21.0.1, SIMD vector distances on"
    assert j17.describe() == "Java 17.0.1, SIMD vector distances off"


def test_configured_java_then_java_home_then_path(tmp_path, monkeypatch):
    home = tmp_path / "jdk21"
    exe = _fake_java(home, 'openjdk version "21.0.2" 2024-01-16')
    monkeypatch.setenv("JAVA_HOME", str(home))
    assert java.locate("") == str(exe)
    assert java.find("") == java.Java(str(exe), "21.0.2", 21)
    other = _fake_java(tmp_path / "jdk17", 'openjdk version "17.0.9" 2023-10-17')
    assert java.find(str(other)).feature == 17  # the configured binary wins over JAVA_HOME
    monkeypatch.setenv("JAVA_HOME", str(tmp_path / "nothing-here"))
    assert java.locate("") == shutil.which("java")
    with pytest.raises(LauncherError, match=r"neo4j.launcher.java: .*missing.* is not an executable"):
        java.locate(str(tmp_path / "missing" / "java"))


def test_too_old_or_unreadable_java_is_an_error_naming_the_binary(tmp_path):
    old = _fake_java(tmp_path / "jdk8", 'java version "1.8.0_402"')
    with pytest.raises(LauncherError, match=rf"{old} is Java 1.8.0_402: the Neo4j launcher needs Java 17 or 21"):
        java.probe(str(old))
    odd = _fake_java(tmp_path / "odd", "no version here")
    with pytest.raises(LauncherError, match=rf"{odd} -version: no version in"):
        java.probe(str(odd))


def test_launcher_cli_reports_a_configured_java_that_does_not_exist(tmp_path):
    cfg = tmp_path / "driftgraph.yaml"
    cfg.write_text(f"neo4j:\n  launcher:\n    java: {tmp_path / 'no-jdk' / 'java'}\n")
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "driftgraph",
            "--config",
            str(cfg),
            "neo4j",
            "start",
            "--port",
            str(_free_port()),
            "--http-port",
            "0",
            "--data-dir",
            str(tmp_path / "d"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
    )
    assert res.returncode != 0
    assert "neo4j.launcher.java" in res.stderr and "no-jdk" in res.stderr
