"""Which Java the embedded Neo4j runs on, and what its version earns.

Neo4j 5.26 runs on Java 17 and 21. On 21 its Lucene (9.11) computes vector distances with the JDK's
incubating Vector API (SIMD) when the module is added to the JVM; Lucene 9.11 takes that path only on Java
20 to 22. HNSW inserts are mostly distance computations, so an import's vector writes and an index build
run faster there (docs/guides/neo4j.md "Java 21 for the vector writes"; ``python -m bench hnsw --java ...``).
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from driftgraph.errors import LauncherError

VECTOR_MODULE = "jdk.incubator.vector"
SUPPORTED = (17, 21)  # the Java versions Neo4j 5.26 supports
VECTOR_FEATURES = range(20, 23)  # where Lucene 9.11 uses the Vector API
DOCKER_HINT = "or run Neo4j with Docker: `docker compose -f docker/compose.yml up -d`"


@dataclass(frozen=True)
class Java:
    path: str
    version: str  # "21.0.13"
    feature: int  # 21

    @property
    def simd_vectors(self) -> bool:
        return self.feature in VECTOR_FEATURES

    def flags(self) -> list[str]:
        """JVM options this version earns: the Vector API module where Lucene uses it."""
        return ["--add-modules", VECTOR_MODULE] if self.simd_vectors else []

    def warning(self) -> str | None:
        if self.feature in SUPPORTED:
            return None
        return (
            f"{self.path} is Java {self.version}; Neo4j 5.26 supports Java 17 and 21 "
            "(set neo4j.launcher.java or JAVA_HOME to one of those)"
        )

    def describe(self) -> str:
        return f"Java {self.version}, SIMD vector distances {'on' if self.simd_vectors else 'off'}"


def parse_version(text: str) -> tuple[str, int]:
    """The version from ``java -version``'s output: ``openjdk version "21.0.13" 2026-10-20`` -> ("21.0.13", 21);
    the old scheme ``"1.8.0_402"`` -> ("1.8.0_402", 8)."""
    m = re.search(r'version "([^"]+)"', text)
    if m is None:
        raise ValueError(f"no version in: {text.strip()[:200]!r}")
    version = m.group(1)
    parts = re.match(r"(\d+)(?:\.(\d+))?", version)
    if parts is None:
        raise ValueError(f"unreadable Java version {version!r}")
    major = int(parts.group(1))
    feature = int(parts.group(2) or 0) if major == 1 else major
    return version, feature


def locate(configured: str) -> str:
    """``neo4j.launcher.java`` when set (it must be an executable), else ``$JAVA_HOME/bin/java``, else ``java``
    on PATH."""
    if configured:
        path = Path(configured).expanduser()
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise LauncherError(f"neo4j.launcher.java: {configured} is not an executable file (a java binary)")
        return str(path)
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").is_file():
        return str(Path(home) / "bin" / "java")
    found = shutil.which("java")
    if found is None:
        raise LauncherError(f"'java' is not installed: the Neo4j launcher needs Java 17 or 21 and Maven; {DOCKER_HINT}")
    return found


@functools.lru_cache(maxsize=8)
def probe(path: str) -> Java:
    """Run ``java -version`` once per binary."""
    try:
        proc = subprocess.run([path, "-version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise LauncherError(f"could not run {path} -version: {e}") from e
    try:
        version, feature = parse_version(proc.stderr + proc.stdout)
    except ValueError as e:
        raise LauncherError(f"{path} -version: {e}") from e
    if feature < 17:
        raise LauncherError(f"{path} is Java {version}: the Neo4j launcher needs Java 17 or 21; {DOCKER_HINT}")
    return Java(path, version, feature)


def find(configured: str) -> Java:
    return probe(locate(configured))
