"""The baseline's virtualenv and how to run code in it.

``bench/.venv-graphrag`` holds graphrag==3.2.0 from PyPI, the offline embedder packages, matplotlib, and
driftgraph itself installed editable without dependencies (so the baseline embeds with driftgraph's exact
``LocalEmbedder``). It is rebuilt when ``requirements-graphrag.txt`` changes.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import time
import venv
from pathlib import Path

from bench import paths

BENCH, ROOT, VENV = paths.BENCH, paths.ROOT, paths.VENV
REQS = BENCH / "requirements-graphrag.txt"
STAMP = VENV / ".bench-stamp"
python = paths.venv_python
child_env = paths.child_env


def _wanted_stamp() -> str:
    return hashlib.sha256(REQS.read_bytes()).hexdigest()


def ensure(log=print) -> Path:
    """Create or refresh the baseline virtualenv; returns its python."""
    if STAMP.is_file() and STAMP.read_text().strip() == _wanted_stamp() and python().is_file():
        return python()
    log(f"creating the baseline virtualenv {VENV} (graphrag==3.2.0 from PyPI; ~2 min, ~1.4 GB)")
    if not python().is_file():
        venv.EnvBuilder(with_pip=True).create(VENV)
    pip = [str(python()), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    subprocess.run([*pip, "-r", str(REQS)], check=True)
    subprocess.run([*pip, "--no-deps", "-e", str(ROOT)], check=True)
    STAMP.write_text(_wanted_stamp())
    return python()


class MemoryCapExceeded(RuntimeError):
    """A measured child grew past the bench's RSS cap and was stopped (the machine is shared)."""

    def __init__(self, cap_mb: float, seconds: float) -> None:
        super().__init__(f"RSS passed the {cap_mb:,.0f} MB cap after {seconds:.0f} s; stopped")
        self.cap_mb = cap_mb


def _rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def run_part(
    interpreter: str | Path,
    part: str,
    args: list[str],
    out: Path,
    log=print,
    timeout: float | None = None,
    max_rss_mb: float | None = None,
) -> dict:
    """Run ``python -m bench part args --out out`` and return the JSON it wrote.

    ``timeout`` raises ``subprocess.TimeoutExpired``; ``max_rss_mb`` stops the child when its RSS passes the
    cap (polled twice a second) and raises ``MemoryCapExceeded`` -- so a system that does not fit is
    reported instead of pushing a shared machine into the OOM killer.
    """
    cmd = [str(interpreter), "-m", "bench", part, *args, "--out", str(out)]
    log("  $ " + " ".join(cmd[1:]))
    out.unlink(missing_ok=True)
    t0 = time.monotonic()
    with subprocess.Popen(cmd, cwd=ROOT, env=child_env()) as proc:
        while proc.poll() is None:
            elapsed = time.monotonic() - t0
            if timeout is not None and elapsed > timeout:
                proc.kill()
                proc.wait()
                raise subprocess.TimeoutExpired(cmd, timeout)
            if max_rss_mb is not None and _rss_mb(proc.pid) > max_rss_mb:
                proc.kill()
                proc.wait()
                raise MemoryCapExceeded(max_rss_mb, elapsed)
            time.sleep(0.5)
        if proc.returncode != 0:
            raise subprocess.CalledProcessError(proc.returncode, cmd)
    return json.loads(out.read_text())


def run_baseline(
    part: str, args: list[str], out: Path, log=print, timeout: float | None = None, max_rss_mb: float | None = None
) -> dict:
    return run_part(ensure(log), part, args, out, log, timeout, max_rss_mb)


def run_driftgraph(
    part: str, args: list[str], out: Path, log=print, timeout: float | None = None, max_rss_mb: float | None = None
) -> dict:
    """Driftgraph's side runs in the interpreter that runs the bench (the project's virtualenv)."""
    return run_part(sys.executable, part, args, out, log, timeout, max_rss_mb)
