"""`driftgraph serve` / `driftgraph mcp` as subprocesses a user would start, against the test Neo4j and the fake
OpenAI server; a driftgraph.yaml in a temporary directory carries the serve settings."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx2 as httpx
import yaml


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve_env(neo4j: dict, fake: Any, api_key: str | None = None) -> dict[str, str]:
    env = {
        **os.environ,
        "NEO4J_URI": neo4j["uri"],
        "NEO4J_PASSWORD": neo4j["password"],
        "OPENAI_BASE_URL": fake.base_url,
        "OPENAI_API_KEY": "test",
    }
    env.pop("DRIFTGRAPH_API_KEY", None)
    if api_key is not None:
        env["DRIFTGRAPH_API_KEY"] = api_key
    return env


def write_config(cwd: Path, serve: dict[str, Any] | None = None, **sections: Any) -> Path:
    """driftgraph.yaml with the serve section and any other (``llm={"max_retries": 0}``)."""
    cwd.mkdir(parents=True, exist_ok=True)
    path = cwd / "driftgraph.yaml"
    data = {"embeddings": {"threads": 1}, "llm": {"max_retries": 0}, "serve": serve or {}}
    for key, value in sections.items():
        data.setdefault(key, {}).update(value)
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


class Server:
    """A running `driftgraph serve`; ``url`` is its base, ``stop()`` sends SIGTERM and waits."""

    def __init__(self, cwd: Path, env: dict[str, str], *args: str, port: int | None = None) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = cwd / f"serve-{self.port}.log"
        self._log = self.log.open("w")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "driftgraph", "serve", "--port", str(self.port), *args],
            cwd=cwd,
            env=env,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )

    def wait_ready(self, timeout: float = 120) -> Server:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"serve exited {self.proc.returncode}: {self.output()}")
            try:
                if httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        raise AssertionError(f"serve did not answer within {timeout}s: {self.output()}")

    def output(self) -> str:
        if not self._log.closed:
            self._log.flush()
        return self.log.read_text(errors="replace")

    def stop(self, timeout: float = 60) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()
        return self.proc.returncode


def metric_samples(url: str, headers: dict[str, str] | None = None) -> dict[tuple[str, frozenset], float]:
    """Every sample of ``GET {url}/metrics``, read by prometheus_client's own parser: (name, labels) -> value."""
    from prometheus_client.parser import text_string_to_metric_families

    res = httpx.get(f"{url}/metrics", headers=headers or {}, timeout=30)
    assert res.status_code == 200 and res.headers["content-type"].startswith("text/plain"), res.text
    out: dict[tuple[str, frozenset], float] = {}
    for family in text_string_to_metric_families(res.text):
        for sample in family.samples:
            out[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return out


def metric(samples: dict[tuple[str, frozenset], float], name: str, **labels: str) -> float:
    """One sample's value; 0 when the series has not appeared yet."""
    return float(samples.get((name, frozenset(labels.items())), 0.0))
