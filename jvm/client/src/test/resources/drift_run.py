"""Test support for the JVM client: one DRIFT search on the imported index with the project's fake
OpenAI-compatible server (tests/support: a deterministic follow-up tree), through the real CLI.

``python drift_run.py ROOT QUESTION`` prints ``driftgraph query drift QUESTION --json`` output; Neo4j comes
from the environment (NEO4J_URI, NEO4J_PASSWORD) like every other driftgraph command.
"""

import os
import subprocess
import sys
from pathlib import Path

root, question = Path(sys.argv[1]), sys.argv[2]
sys.path.insert(0, str(root))

from tests.support.drift_fakes import DULCE_LAYERS, tree_responder  # noqa: E402
from tests.support.fake_openai import FakeOpenAI  # noqa: E402

server = FakeOpenAI(tree_responder(layers=DULCE_LAYERS)).start()
try:
    env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "test"}
    cli = Path(sys.executable).with_name("driftgraph")
    args = [str(cli), "query", "drift", question, "--json", "--seed", "1", "--max-llm-calls", "8", "--max-depth", "2"]
    res = subprocess.run(args, env=env, capture_output=True, text=True, check=False)
finally:
    server.stop()
sys.stderr.write(res.stderr)
sys.stdout.write(res.stdout)
sys.exit(res.returncode)
