"""Regenerates tests/data/traces/*.json: real stored retrievals and their subgraphs, for the page tests.

Needs a running Neo4j that may be wiped (NEO4J_URI, NEO4J_PASSWORD) and ../shared/data/operation-dulce::

    NEO4J_URI=bolt://127.0.0.1:7793 NEO4J_PASSWORD=... python -m tests.support.view_fixtures tests/data/traces

Runs the CLI as a user would (``query ... --json`` then ``trace show ID --json``), DRIFT and global against
the fake OpenAI server (tests/support/drift_fakes.py, global_fake.py), and ``fetch_subgraph`` right after
each query while its index is loaded. Each fixture file is ``{"retrieval": <trace show --json>, "graph": ...}``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from driftgraph.config import Neo4jConfig
from driftgraph.store.db import Store
from driftgraph.view.graph import fetch_subgraph
from tests.support.drift_fakes import DULCE_LAYERS, h, tree_responder
from tests.support.fake_openai import FakeOpenAI
from tests.support.global_fake import responder as global_responder

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "examples" / "sample-index"
DULCE = ROOT.parent / "shared" / "data" / "operation-dulce"


def _cli(args: list[str], env: dict[str, str]) -> str:
    res = subprocess.run(
        [sys.executable, "-m", "driftgraph", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=900
    )
    if res.returncode != 0:
        raise RuntimeError(f"driftgraph {' '.join(args)} failed:\n{res.stderr}")
    return res.stdout


def _save(out: Path, name: str, args: list[str], env: dict[str, str], store: Store) -> None:
    envelope = json.loads(_cli(args, env))
    rid = envelope["retrieval_id"]
    retrieval = json.loads(_cli(["trace", "show", rid, "--json"], env))
    graph = fetch_subgraph(store, rid)
    (out / f"{name}.json").write_text(json.dumps({"retrieval": retrieval, "graph": graph}, indent=1) + "\n")
    print(f"{name}: {rid} items={len(retrieval['retrieval']['trace']['items'])} nodes={len(graph['nodes'])}")


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    fake = FakeOpenAI().start()
    env = {**os.environ, "OPENAI_BASE_URL": fake.base_url, "OPENAI_API_KEY": "test"}
    cfg = Neo4jConfig(uri=env["NEO4J_URI"], password=env.get("NEO4J_PASSWORD", "driftgraph"))
    question = "Who organises the Kelmouth Lantern Festival and what does Corran Foundry supply for it?"
    try:
        with Store(cfg) as store:
            _cli(["import-graphrag", str(SAMPLE), "--reset"], env)
            local = ["query", "local", question, "--context-only", "--json", "--budget", "900"]
            _save(out, "local", local, env, store)
            basic = ["query", "basic", "What happened to the Tidewater Grid in the 2019 storm?", "--context-only"]
            _save(out, "basic", [*basic, "--json"], env, store)
            _cli(["import-graphrag", str(DULCE), "--reset"], env)
            dulce_q = "What is Operation: Dulce and who leads the team at Dulce base?"
            _save(out, "local_dulce", ["query", "local", dulce_q, "--context-only", "--json"], env, store)
            fake.responder = _drift_responder()
            _save(out, "drift", ["query", "drift", dulce_q, "--json", "--seed", "5"], env, store)
            fake.responder = global_responder
            broad = "What is the role of the Paranormal Military Squad at Dulce base?"
            _save(out, "global", ["query", "global", broad, "--json", "--dynamic"], env, store)
    finally:
        fake.stop()


def _drift_responder() -> Any:
    """The e2e tests' follow-up tree, with scores that differ per question so the page shows a spread."""
    return tree_responder(layers=DULCE_LAYERS, score=lambda q, depth: 20 + (h(q) % 70) + depth)


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "tests" / "data" / "traces"))
