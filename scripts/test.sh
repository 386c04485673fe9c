#!/usr/bin/env bash
# The whole test suite, on a fresh machine or a dev checkout: venv + install (if needed), a real Neo4j
# from jvm/launcher (unless NEO4J_URI points at one), pytest, then the JVM client tests. Neo4j is
# stopped on every exit path. pytest's "no tests collected" (exit 5) counts as a failure.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
VENV=${DRIFTGRAPH_VENV:-$ROOT/.venv}

if [ ! -x "$VENV/bin/driftgraph" ] || [ pyproject.toml -nt "$VENV/.installed" ]; then
  python3 -m venv "$VENV" || exit 1
  "$VENV/bin/pip" install -q --upgrade pip || exit 1
  "$VENV/bin/pip" install -q -e ".[dev]" || exit 1
  touch "$VENV/.installed"
fi
export PATH="$VENV/bin:$PATH"

started=""
if [ -z "${NEO4J_URI:-}" ]; then
  port=${DRIFTGRAPH_TEST_PORT:-7687}
  export NEO4J_PASSWORD=${NEO4J_PASSWORD:-driftgraph-test}
  export NEO4J_URI="bolt://127.0.0.1:$port"
  datadir="$ROOT/.driftgraph/test-neo4j"
  rm -rf "$datadir"
  driftgraph neo4j start --port "$port" --data-dir "$datadir" || exit 1
  started="$datadir"
  trap 'driftgraph neo4j stop --port "$port" --data-dir "$started" >/dev/null' EXIT
fi

python -m pytest "$@"
rc=$?
if [ $rc -eq 5 ]; then
  echo "pytest collected no tests: failing" >&2
  exit 1
fi
[ $rc -ne 0 ] && exit $rc

if [ -f jvm/client/pom.xml ] && [ $# -eq 0 ]; then
  (cd jvm/client && mvn -q -B test -Ddriftgraph.root="$ROOT") || exit 1
fi
exit 0
