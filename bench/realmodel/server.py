"""llama-cpp-python's OpenAI-compatible server in a virtualenv of its own, started for a run and stopped after.

The server gets its own venv (``requirements.txt``) so its pins never meet driftgraph's. llama.cpp is built
for a portable x86-64 target (AVX2, FMA, F16C; no AVX-512, no AMX): a native build on a VM whose CPU
advertises AMX crashed here with a general protection fault inside ``libggml-cpu`` on the first request.
Threads are an option (``--threads``); nothing else CPU-heavy should run beside it, since llama.cpp slows
more than tenfold under contention.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
PORTABLE = (
    "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON "
    "-DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF"
)


@dataclass(frozen=True)
class Server:
    base_url: str
    model: str  # the name the server lists (any name is answered by its one model)
    log: Path


def ensure_venv(venv: Path, log=print) -> Path:
    """The server's python, installing the pinned llama-cpp-python once (compiles llama.cpp the first time)."""
    python = venv / "bin" / "python"
    stamp = venv / ".installed"
    pins = (HERE / "requirements.txt").read_text()
    if python.exists() and stamp.exists() and stamp.read_text() == pins:
        return python
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    log("installing llama-cpp-python for the real-model server (the first build compiles llama.cpp: ~10-16 min)")
    env = {**os.environ, "CMAKE_ARGS": PORTABLE, "CMAKE_BUILD_PARALLEL_LEVEL": str(os.cpu_count() or 2)}
    cmd = [str(python), "-m", "pip", "install", "-q", "-r", str(HERE / "requirements.txt")]
    subprocess.run(cmd, check=True, env=env)
    stamp.write_text(pins)
    return python


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def running(
    python: Path, model: Path, *, threads: int, ctx: int, log_dir: Path, timeout_s: float = 300
) -> Iterator[Server]:
    """llama_cpp.server on a free loopback port for the duration of the block."""
    port = _free_port()
    log_dir.mkdir(parents=True, exist_ok=True)
    log_file = log_dir / f"llama-server-{port}.log"
    cmd = [
        str(python), "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1", "--port", str(port),
        "--n_threads", str(threads), "--n_ctx", str(ctx), "--seed", "0",
    ]  # fmt: skip
    with log_file.open("wb") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            if proc.poll() is not None:
                raise SystemExit(f"real-model server exited with {proc.returncode} while starting: see {log_file}")
            try:
                with urllib.request.urlopen(f"{base}/models", timeout=5) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise SystemExit(f"real-model server did not answer within {timeout_s:g}s: see {log_file}")
            time.sleep(1)
        yield Server(base, model.name, log_file)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
