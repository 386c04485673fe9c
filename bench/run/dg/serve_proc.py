"""The server under test for ``bench.run.dg.serve``: ``driftgraph serve`` as a subprocess, as users run it, on a free
loopback port with its own config file and log, started until ``/readyz`` answers and stopped by SIGTERM."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def config_yaml(workdir: Path, max_concurrency: int) -> Path:
    import yaml

    path = workdir / "driftgraph.yaml"
    path.write_text(yaml.safe_dump({"serve": {"max_concurrency": max_concurrency}}), encoding="utf-8")
    return path


def start_server(workdir: Path, uri: str, password: str, port: int) -> subprocess.Popen[bytes]:
    import httpx2 as httpx

    env = {**os.environ, "NEO4J_URI": uri, "NEO4J_PASSWORD": password}
    env.pop("DRIFTGRAPH_API_KEY", None)
    log = (workdir / "serve.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "driftgraph", "serve", "--port", str(port)], cwd=workdir, env=env, stdout=log, stderr=log
    )
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"driftgraph serve exited {proc.returncode}: see {workdir / 'serve.log'}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=2).status_code == 200:
                return proc
        except httpx.TransportError:
            pass
        time.sleep(0.3)
    proc.kill()
    raise SystemExit("driftgraph serve did not become ready in 180 s")


def stop_server(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(60)
    except subprocess.TimeoutExpired:
        proc.kill()
