"""The baseline's virtualenv and how to run code in it.

``bench/.venv-graphrag`` holds graphrag==3.2.0 from PyPI, the offline embedder packages, matplotlib, and
driftgraph itself installed editable without dependencies (so the baseline embeds with driftgraph's exact
``LocalEmbedder``). It is rebuilt when ``requirements-graphrag.txt`` changes.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import venv
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
VENV = BENCH / ".venv-graphrag"
REQS = BENCH / "requirements-graphrag.txt"
STAMP = VENV / ".bench-stamp"


def python() -> Path:
    return VENV / "bin" / "python"


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


def child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
    env.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    env.setdefault("TOKENIZERS_PARALLELISM", "false")
    return env


def run_module(
    interpreter: str | Path, module: str, args: list[str], out: Path, log=print, timeout: float | None = None
) -> dict:
    """Run ``python -m module args --out out`` and return the JSON it wrote."""
    cmd = [str(interpreter), "-m", module, *args, "--out", str(out)]
    log("  $ " + " ".join(cmd[1:]))
    out.unlink(missing_ok=True)
    subprocess.run(cmd, check=True, cwd=ROOT, env=child_env(), timeout=timeout)
    return json.loads(out.read_text())


def run_baseline(module: str, args: list[str], out: Path, log=print, timeout: float | None = None) -> dict:
    return run_module(ensure(log), module, args, out, log, timeout)


def run_driftgraph(module: str, args: list[str], out: Path, log=print, timeout: float | None = None) -> dict:
    """Driftgraph's side runs in the interpreter that runs the bench (the project's virtualenv)."""
    return run_module(sys.executable, module, args, out, log, timeout)
