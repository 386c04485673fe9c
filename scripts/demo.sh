#!/usr/bin/env bash
# The main job end to end on the embedded defaults: venv + install, the local Neo4j launcher, the offline
# embedder, and the sample data. Safe to re-run (idempotent writes).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
VENV=${DRIFTGRAPH_VENV:-$ROOT/.venv}
if [ ! -x "$VENV/bin/driftgraph" ] || [ pyproject.toml -nt "$VENV/.installed" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --upgrade pip
  "$VENV/bin/pip" install -q -e ".[dev]"
  touch "$VENV/.installed"
fi
export PATH="$VENV/bin:$PATH"
if [ -z "${NEO4J_URI:-}" ]; then   # no Neo4j of yours: start the embedded one (Bolt on 127.0.0.1:7687)
  # Its first start generates a password and keeps it in .driftgraph/neo4j/neo4j-password (owner-only), where
  # driftgraph reads it while NEO4J_PASSWORD is unset. DRIFTGRAPH_DEMO_PORT / _HTTP_PORT: other ports.
  port=${DRIFTGRAPH_DEMO_PORT:-7687}
  export NEO4J_URI=bolt://127.0.0.1:$port
  driftgraph neo4j start --port "$port" ${DRIFTGRAPH_DEMO_HTTP_PORT:+--http-port "$DRIFTGRAPH_DEMO_HTTP_PORT"}
fi
driftgraph doctor

# The index: built from examples/docs/ when an LLM endpoint is configured, else the committed sample index
# (GraphRAG parquet made from the same documents) is imported, so the demo needs no LLM.
if [ -n "${OPENAI_API_KEY:-}" ] || [ -n "${OPENAI_BASE_URL:-}" ]; then
  driftgraph index examples/docs --reset   # --reset: the database may hold the imported sample
else
  driftgraph import-graphrag examples/sample-index --reset
fi

QUESTION="Who recovered the turbines after the Winter Storm of 2019, and what did the council change afterwards?"
if [ -n "${OPENAI_API_KEY:-}" ] || [ -n "${OPENAI_BASE_URL:-}" ]; then
  driftgraph query local "$QUESTION"
else
  # No LLM here: show what local search retrieved for the question (the context an LLM would answer from).
  driftgraph query local "$QUESTION" --context-only
fi
echo
echo "Every retrieval is stored in Neo4j: 'driftgraph trace list', then 'driftgraph trace show ID' or"
echo "'driftgraph trace cypher ID' for the Cypher that draws it in Neo4j Browser. Stop Neo4j: driftgraph neo4j stop"

# The retrieval just made (the newest), as one self-contained web page: budget, route, entry verdicts,
# every item kept or dropped, the retrieved subgraph, the cost ledger.
ID=$(driftgraph trace list -n 1 --json | python -c 'import json, sys; print(json.load(sys.stdin)[0]["id"])')
PAGE=$(driftgraph trace html "$ID")
echo
echo "The retrieval page of this question: $PAGE"
echo "(open it in any browser; 'driftgraph trace open $ID' does that for you)"
