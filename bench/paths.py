"""Where the bench keeps things, and the environment of the child processes it starts.

Shared by both halves (``bench.run`` measures, ``bench.report`` renders) and by the baseline virtualenv, so it
imports nothing but the standard library.
"""

from __future__ import annotations

import os
from pathlib import Path

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
CACHE = BENCH / ".cache"
QUESTIONS = BENCH / "questions"
RESULTS = BENCH / "results"
RAW = RESULTS / "raw"
LATEST = RESULTS / "latest.md"
SHARED = Path(os.environ.get("DRIFTGRAPH_SHARED_DATA", ROOT.parent / "shared" / "data"))
VENV = BENCH / ".venv-graphrag"  # the GraphRAG baseline's virtualenv (bench.run.env creates it)


def venv_python() -> Path:
    return VENV / "bin" / "python"


def child_env() -> dict[str, str]:
    """The environment of a child ``python -m bench <part>``: the checkout on PYTHONPATH, GraphRAG quiet and offline."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH", "")]))
    env.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    env.setdefault("TOKENIZERS_PARALLELISM", "false")
    env.setdefault("TQDM_DISABLE", "1")  # GraphRAG's DRIFT progress bars would flood the log
    return env
