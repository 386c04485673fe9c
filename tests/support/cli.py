"""Running the installed CLI as a user would, against the test Neo4j and the fake OpenAI server."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any


def run_cli(args: list[str], neo4j: dict, fake: Any, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    """``python -m driftgraph ARGS`` with NEO4J_* and OPENAI_* pointing at the test services."""
    env = {
        **os.environ,
        "NEO4J_URI": neo4j["uri"],
        "NEO4J_PASSWORD": neo4j["password"],
        "OPENAI_BASE_URL": fake.base_url,
        "OPENAI_API_KEY": "test",
    }
    return subprocess.run(
        [sys.executable, "-m", "driftgraph", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )
