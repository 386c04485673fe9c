"""DRIFT end to end: operation-dulce in a real Neo4j, real local-search steps, the real openai client against
the fake server (tests/support/drift_fakes.tree_responder grows a deterministic follow-up tree)."""

from __future__ import annotations

import json
from typing import Any

from driftgraph.api import open_engine
from driftgraph.query.drift.queue import normalise
from driftgraph.query.drift.stop import STOP_REASONS
from tests.conftest import make_config
from tests.support.cli import run_cli as _cli
from tests.support.cypher import q as _q
from tests.support.drift_fakes import DULCE_LAYERS, h, step_query, tree_responder

QUESTION = "What is Operation: Dulce and who leads the team at Dulce base?"


def _cfg(neo4j: dict, fake: Any, **drift: Any) -> Any:
    return make_config(neo4j, llm={"base_url": fake.base_url, "api_key": "test", "max_retries": 0}, drift=drift)


def _seq(out: dict) -> list[tuple]:
    return [(s["id"], s["query"], s["depth"], s["status"], s["epoch"]) for s in out["steps"]]


def test_envelope_budget_and_stored_step_tree(dulce, fake_llm):
    fake_llm.responder = tree_responder(layers=DULCE_LAYERS)
    cfg = _cfg(dulce, fake_llm, min_score_gain=0)
    with open_engine(cfg) as eng:
        out = eng.query_drift(QUESTION, seed=5).to_dict()
        store = eng.store
        rid = out["retrieval_id"]
        # the shared envelope plus DRIFT's keys
        for key in ("mode", "question", "answer", "retrieval_id", "context", "trace", "cost"):
            assert key in out
        for key in ("seed", "stop_reason", "limits", "steps", "uncovered", "epochs"):
            assert key in out
        assert out["mode"] == "drift" and out["seed"] == 5 and out["stop_reason"] in STOP_REASONS
        assert out["limits"]["max_llm_calls"] == cfg.drift.max_llm_calls
        assert set(out["cost"]["phases"]) >= {"hyde", "primer", "steps", "reduce", "total"}
        # ledger == what the server received, within the budget
        assert out["cost"]["llm_calls"] == len(fake_llm.chat_requests()) <= cfg.drift.max_llm_calls
        assert out["cost"]["phases"]["total"]["llm_calls"] == out["cost"]["llm_calls"]
        steps = out["steps"]
        executed = [normalise(s["query"]) for s in steps if s["status"] != "uncovered"]
        assert len(executed) == len(set(executed)) > 5
        assert {u["id"] for u in out["uncovered"]} == {s["id"] for s in steps if s["status"] == "uncovered"}
        assert all(
            s["context_tokens"] <= cfg.drift.local.context_cap
            for s in steps
            if s.get("context_tokens") and s["kind"] == "local"
        )
        # the primer read reports labelled with their community number; a made-up id was removed
        assert "9999" not in steps[0]["answer"]
        # the tree in Neo4j
        stored = _q(
            store,
            "MATCH (:Retrieval {id: $id})-[:STEP]->(s:DriftStep) RETURN s.step_id AS id, "
            "s.status AS status, s.depth AS depth",
            id=rid,
        )
        assert sorted((r["id"], r["status"], r["depth"]) for r in stored) == sorted(
            (s["id"], s["status"], s["depth"]) for s in steps
        )
        edges = _q(
            store,
            "MATCH (:Retrieval {id: $id})-[:STEP]->(p:DriftStep)-[:FOLLOW_UP]->(c:DriftStep) "
            "RETURN p.step_id AS p, c.step_id AS c",
            id=rid,
        )
        assert sorted((e["p"], e["c"]) for e in edges) == sorted((s["parent"], s["id"]) for s in steps if s["parent"])
        included = _q(
            store,
            "MATCH (:Retrieval {id: $id})-[:STEP]->(s:DriftStep)-[i:INCLUDED]->(x) "
            "RETURN s.step_id AS step, i.source AS source, count(*) AS n",
            id=rid,
        )
        by_step: dict[str, set[str]] = {}
        for row in included:
            by_step.setdefault(row["step"], set()).add(row["source"])
        # every step whose context held items is linked to them (an off-topic step holds only a note)
        with_items = [s["id"] for s in steps if s["status"] == "done" and s["kind"] == "local" and s["included"]]
        assert len(with_items) > 5 and all(by_step[sid] & {"chunk", "entity"} for sid in with_items)
        counts = {r["step"]: 0 for r in included}
        for r in included:
            counts[r["step"]] += r["n"]
        assert all(counts[sid] == next(s["included"] for s in steps if s["id"] == sid) for sid in with_items)
        assert by_step["s0"] == {"report"}
        # B's reader returns the same tree
        assert len(store.read("trace/steps", id=rid)) == len(steps)
        # the stop reason's evidence: one sufficient check after the primer and after every epoch
        stop = out["trace"]["stop"]
        assert stop["reason"] == out["stop_reason"] and len(stop["checks"]) == len(out["epochs"]) + 1
        assert stop["checks"][0]["depth"] == 0 and not stop["checks"][0]["sufficient"]


def test_same_seed_same_steps_whatever_the_completion_order(dulce, fake_llm):
    base = tree_responder(layers=DULCE_LAYERS)
    answered: list[str] = []

    def respond(req):
        answered.append(step_query(req))
        return base(req)

    fake_llm.responder = respond
    cfg = _cfg(dulce, fake_llm, min_score_gain=0, concurrency=6)
    runs, orders = [], []
    for shift in (0, 3):
        fake_llm.delay = lambda req, s=shift: ((h(json.dumps(req["messages"])) + s) % 5) * 0.01
        answered.clear()
        with open_engine(cfg) as eng:
            runs.append(eng.query_drift(QUESTION, seed=9).to_dict())
        orders.append(list(answered))
    assert orders[0] != orders[1] and sorted(orders[0]) == sorted(orders[1])
    assert _seq(runs[0]) == _seq(runs[1])
    assert runs[0]["stop_reason"] == runs[1]["stop_reason"]
    assert runs[0]["cost"]["llm_calls"] == runs[1]["cost"]["llm_calls"]


def test_cli_flags(dulce, fake_llm, tmp_path):
    fake_llm.responder = tree_responder(layers=DULCE_LAYERS)
    res = _cli(["query", "drift", QUESTION, "--json", "--seed", "3", "--max-llm-calls", "6"], dulce, fake_llm, tmp_path)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["seed"] == 3 and out["limits"]["max_llm_calls"] == 6
    assert out["cost"]["llm_calls"] == len(fake_llm.chat_requests()) <= 6
    assert out["stop_reason"] == "budget" and out["answer"]

    fake_llm.requests.clear()
    res = _cli(["query", "drift", QUESTION, "--json", "--no-reduce", "--max-depth", "1"], dulce, fake_llm, tmp_path)
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["answer"] is None and out["cost"]["phases"]["reduce"]["llm_calls"] == 0
    assert out["limits"]["max_depth"] == 1 and max(e["depth"] for e in out["epochs"]) <= 1
    assert out["context"]["text"].startswith("## Step s0")  # the step tree is what comes back

    res = _cli(["query", "drift", QUESTION, "--no-reduce", "--max-depth", "1"], dulce, fake_llm, tmp_path)
    assert res.returncode == 0, res.stderr
    assert res.stdout.startswith("s0 [done") and "\n  s" in res.stdout
    assert "stop " in res.stderr and "chat calls" in res.stderr

    res = _cli(["query", "drift", QUESTION, "--stream", "--max-depth", "1"], dulce, fake_llm, tmp_path)
    assert res.returncode == 0, res.stderr
    assert "Final answer" in res.stdout and "epoch 1" in res.stderr
    assert "sufficient: no (no grounded answer scored at least 90" in res.stderr  # the check, as it runs

    res = _cli(["query", "drift", "   "], dulce, fake_llm, tmp_path)
    assert res.returncode == 1 and "question is empty" in res.stderr and "Traceback" not in res.stderr


def test_a_corroborated_run_stops_sufficient_and_the_stored_trace_says_why(dulce, fake_llm, tmp_path):
    """Issue 37: the primer scores itself 100 and cannot stop the run; the first epoch's steps score 95 and say
    the same thing, which the configured embedder (not the model) measures, so the run stops ``sufficient``
    after one epoch. The evidence is stored with the retrieval and drawn on its page."""
    from driftgraph.store.traces import read_retrieval
    from driftgraph.view import fetch_subgraph, render_page

    same = "Alex Mercer leads the Paranormal Military Squad team at Dulce base. [Data: Sources (1)]"
    fake_llm.responder = tree_responder(
        score=lambda q, depth: 100 if depth == 0 else 95, layers=DULCE_LAYERS, answer=lambda q, depth: same
    )
    with open_engine(_cfg(dulce, fake_llm)) as eng:
        res = eng.query_drift(QUESTION, seed=5)
        stored = read_retrieval(eng.store, res.retrieval_id)
        page = render_page(stored, fetch_subgraph(eng.store, res.retrieval_id))
    out = res.to_dict()
    assert out["stop_reason"] == "sufficient" and [e["depth"] for e in out["epochs"]] == [1]
    assert sum(1 for s in out["steps"] if s["kind"] == "local" and s["status"] == "done") >= 2
    stop = stored["retrieval"]["trace"]["stop"]
    assert stop == out["trace"]["stop"] == res.stop
    first, check = stop["checks"]
    assert first["claim"] == {"step": "s0", "score": 100} and not first["sufficient"]
    pair = check["agreed"][0]
    assert "similarity" in pair["measures"] and pair["similarity"] >= 0.99
    epoch_one = {s["id"] for s in out["steps"] if s["epoch"] == 1}
    assert {pair["a"], pair["b"]} <= epoch_one
    assert 'id="stop-evidence"' in page and f"{pair['a']} and {pair['b']} agree by" in page
    # the command line's last line says why
    res = _cli(["query", "drift", QUESTION, "--seed", "5"], dulce, fake_llm, tmp_path)
    assert res.returncode == 0, res.stderr
    assert "stop sufficient (epoch 1: " in res.stderr and " agree by " in res.stderr
