"""Local search end to end: operation-dulce in a real Neo4j, the CLI as a user runs it, the real openai client
against the fake server; the trace read back from Neo4j."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from driftgraph.api import open_engine
from driftgraph.query.local.search import LocalAsk, build_local_context
from driftgraph.query.requests import LocalQuery
from driftgraph.store.db import Store
from tests.conftest import make_config
from tests.support.cypher import q as _q

QUESTION = "What is Operation: Dulce and who leads the team at Dulce base?"
ANSWER = "Operation: Dulce is a mission [Data: Sources (1); Entities (1, 99); Reports (77)]."


def responder(req: dict[str, Any]) -> str:
    text = "\n".join(m.get("content") or "" for m in req["messages"])
    if "Standalone question:" in text:
        return "What did Alex Mercer find at Dulce base?"
    if "Classify the shape of a question" in text:
        return json.dumps({"shape": "thematic"})
    return ANSWER


def _cfg(neo4j: dict, fake: Any, **local: Any) -> Any:
    return make_config(neo4j, llm={"base_url": fake.base_url, "api_key": "test", "max_retries": 0}, local=local)


def _cli(
    tmp_path: Path, neo4j: dict, fake: Any, *args: str, llm: dict | None = None, local: dict | None = None
) -> subprocess.CompletedProcess:
    conf: dict[str, Any] = {
        "llm": {"base_url": fake.base_url, "api_key": "test", "max_retries": 0, **(llm or {})},
        "embeddings": {"threads": 1},
    }
    if local:
        conf["local"] = local
    (tmp_path / "driftgraph.yaml").write_text(yaml.safe_dump(conf))
    env = {**os.environ, "NEO4J_URI": neo4j["uri"], "NEO4J_PASSWORD": neo4j["password"]}
    env.pop("OPENAI_BASE_URL", None)
    return subprocess.run(
        [sys.executable, "-m", "driftgraph", "query", "local", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_cli_json_envelope_answer_citations_and_stored_trace(dulce, fake_llm, tmp_path):
    fake_llm.responder = responder
    res = _cli(tmp_path, dulce, fake_llm, QUESTION, "--json")
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert list(out)[:7] == ["mode", "question", "answer", "retrieval_id", "context", "trace", "cost"]
    assert out["mode"] == "local" and out["answer"] == ANSWER
    trace, ctx = out["trace"], out["context"]
    # budget arithmetic, derived from the deployment (not fixed), and never exceeded
    b = trace["budget"]
    assert b["derived"] == b["window"] - b["answer_reserve"] - b["prompt"] - b["question"] - b["history"]
    assert b["context"] == min(b["derived"], b["cap"]) == ctx["budget"] and not b["fixed"]
    assert 0 < ctx["tokens"] <= b["context"]
    # every statement: the schema check, entry, expansion, the bridge's third hop (the walk ranks all they found)
    # and the trace write
    assert trace["round_trips"] == 5
    assert trace["route"]["shape"] in ("fact", "relational", "thematic") and trace["route"]["order"]
    assert {"id", "title", "score", "status", "reason"} <= set(trace["entry"][0])
    included = [i for i in trace["items"] if i["status"] == "included"]
    assert included and all({"source", "id", "tokens", "status", "reason"} <= set(i) for i in trace["items"])
    assert all(i["reason"] for i in trace["items"] if i["status"] == "dropped")
    # citations checked after generation: Sources 1 and Entities 1 exist, Entities 99 and Reports 77 do not
    cit = trace["citations"]
    assert "Entities 99" in cit["unmapped"] and "Reports 77" in cit["unmapped"]
    assert cit["cited"]["Sources"] and cit["cited"]["Entities"]
    # cost: one answer call, exactly what the server received; one query embedding
    assert out["cost"]["llm_calls"] == len(fake_llm.chat_requests()) == 1
    assert out["cost"]["embedding_calls"] == 1
    system = fake_llm.chat_requests()[0]["messages"][0]["content"]
    assert ctx["text"] in system
    # the trace in Neo4j: INCLUDED edges are exactly the included items
    with Store(make_config(dulce).neo4j) as store:
        rows = _q(
            store,
            "MATCH (:Retrieval {id: $id})-[e:INCLUDED]->() RETURN e.source AS s, e.item_id AS i",
            id=out["retrieval_id"],
        )
    assert {(r["s"], r["i"]) for r in rows} == {(i["source"], i["id"]) for i in included}
    shown = subprocess.run(
        [sys.executable, "-m", "driftgraph", "trace", "show", out["retrieval_id"], "--json"],
        cwd=tmp_path,
        env={**os.environ, "NEO4J_URI": dulce["uri"], "NEO4J_PASSWORD": dulce["password"]},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert shown.returncode == 0, shown.stderr
    stored = json.loads(shown.stdout)["retrieval"]
    assert stored["trace"]["budget"] == b and stored["query"] == QUESTION


def test_cli_context_only_fixed_budget_and_stream(dulce, fake_llm, tmp_path):
    fake_llm.responder = responder
    # ranking: score puts dulce's one small chunk among the first three; with ppr it ranks fifth and the floor,
    # which tries the first chunk_floor chunks only, finds none that fits 700 tokens (budget code, issue 16 item 4)
    res = _cli(
        tmp_path, dulce, fake_llm, QUESTION, "--context-only", "--json", "--budget", "700", local={"ranking": "score"}
    )
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["answer"] is None and not fake_llm.chat_requests()
    b = out["trace"]["budget"]
    assert b["context"] == 700 and b["fixed"] and b["derived"] > 700
    assert out["context"]["tokens"] <= 700
    # floors: the evidence floor holds on a small budget
    assert any(i["source"] == "chunk" and i["status"] == "included" for i in out["trace"]["items"])
    streamed = _cli(tmp_path, dulce, fake_llm, QUESTION, "--stream")
    assert streamed.returncode == 0, streamed.stderr
    assert streamed.stdout.strip() == ANSWER
    assert fake_llm.chat_requests()[-1].get("stream") is True


@pytest.mark.parametrize(
    ("args", "files", "message"),
    [
        (["   "], {}, "question is empty"),
        (["q?", "--history", "h.json"], {"h.json": "[{"}, "not valid JSON"),
        (["q?", "--history", "h.json"], {"h.json": '[{"role": "bot", "content": "x"}]'}, "role 'bot'"),
        (["q?", "--history", "missing.json"], {}, "history file not found"),
        (["q?", "--route", "sideways"], {}, "--route must be"),
        (["word " * 3000], {}, "does not fit the model window"),
    ],
)
def test_cli_bad_input_is_one_line(dulce, fake_llm, tmp_path, args, files, message):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    res = _cli(tmp_path, dulce, fake_llm, *args, llm={"model_context_window": 2048})
    assert res.returncode != 0
    assert message in res.stderr and "Traceback" not in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1
    assert not fake_llm.chat_requests()


def test_history_rewrites_only_when_needed(dulce, fake_llm):
    fake_llm.responder = responder
    history = [
        {"role": "user", "content": "Who is Alex Mercer?"},
        {"role": "assistant", "content": "An agent of the Paranormal Military Squad."},
    ]
    with open_engine(_cfg(dulce, fake_llm)) as eng:
        out = eng.query_local("What did he find at Dulce base?", history=history).to_dict()
        rw = out["trace"]["rewrite"]
        assert rw["method"] == "llm" and rw["original"] == "What did he find at Dulce base?"
        assert rw["rewritten"] == "What did Alex Mercer find at Dulce base?" and "he" in rw["reason"]
        assert out["cost"]["llm_calls"] == len(fake_llm.chat_requests()) == 2
        assert out["trace"]["budget"]["history"] > 0
        # a self-contained question with the same history: no rewrite call
        before = len(fake_llm.chat_requests())
        out2 = eng.query_local("What is Operation: Dulce?", history=history).to_dict()
        assert out2["trace"]["rewrite"]["method"] == "rule"
        assert len(fake_llm.chat_requests()) == before + 1


def test_off_topic_question_has_no_entry_entities_and_says_so(dulce, fake_llm):
    with open_engine(_cfg(dulce, fake_llm)) as eng:
        out = eng.query_local("What is the best recipe for chocolate chip cookies?").to_dict()
    entities = [e for e in out["trace"]["entry"] if e.get("kind", "entity") == "entity"]
    assert entities and all(e["status"] == "dropped" and e["reason"] == "below_threshold" for e in entities)
    assert "No entity in the index is similar enough" in out["context"]["text"]
    assert not [i for i in out["trace"]["items"] if i["status"] == "included"]
    assert out["cost"]["llm_calls"] == 0 and not fake_llm.chat_requests()
    assert "does not contain enough relevant information" in out["answer"]
    with open_engine(_cfg(dulce, fake_llm)) as eng:  # a budget too small for the note: still within it
        tiny = build_local_context(
            eng.runtime.for_run(), LocalAsk("Chocolate chip cookie recipe?", budget=10), eng.config.local
        )
    assert tiny.tokens <= 10


def test_excluded_entity_never_enters(dulce, fake_llm):
    with open_engine(_cfg(dulce, fake_llm)) as eng:
        out = eng.query_local("Who is Alex Mercer?", context_only=True, exclude=["alex mercer"]).to_dict()
    alex = [e for e in out["trace"]["entry"] if e["title"] == "ALEX MERCER"]
    assert alex and alex[0]["status"] == "dropped" and alex[0]["reason"] == "excluded"
    assert not any(i["id"] == alex[0]["id"] for i in out["trace"]["items"] if i["status"] == "included")
    assert "-----Relationships-----" not in out["context"]["text"] or "|ALEX MERCER|" not in out["context"]["text"]


def test_routes_rule_forced_and_llm_router(dulce, fake_llm):
    fake_llm.responder = responder
    with open_engine(_cfg(dulce, fake_llm)) as eng:
        themes = eng.query_local("What are the main themes of the story?", context_only=True).to_dict()
        assert themes["trace"]["route"]["shape"] == "thematic"
        assert themes["context"]["text"].index("-----Reports-----") < themes["context"]["text"].index("-----Sources")
        fact = eng.query_local(QUESTION, context_only=True, route="fact").to_dict()
        assert fact["trace"]["route"]["router"] == "config" and fact["context"]["text"].startswith("-----Sources")
        assert not fake_llm.chat_requests()
    with open_engine(_cfg(dulce, fake_llm, llm_router=True, route="auto")) as eng:
        out = eng.query_local("Tell me everything", context_only=True).to_dict()
    assert out["trace"]["route"]["router"] == "llm" and out["trace"]["route"]["shape"] == "thematic"
    assert len(fake_llm.chat_requests()) == 1 and out["cost"]["phases"]["route"]["llm_calls"] == 1


@pytest.mark.parametrize(
    ("local", "trips"), [({"max_hops": 2}, 2), ({}, 3), ({"max_hops": 2, "ppr": {"fetch": True}}, 3)]
)
def test_ppr_retrieval_is_two_round_trips_plus_the_bridge_and_the_neighbourhood_fetch(dulce, fake_llm, local, trips):
    with open_engine(_cfg(dulce, fake_llm, **local)) as eng:
        rt = eng.runtime.for_run()
        ctx = build_local_context(rt, LocalAsk(QUESTION, budget=3000), eng.config.local)
        assert rt.store.round_trips == ctx.recorder.round_trips == trips
        assert ctx.chunk_ids and ctx.recorder.extra["ppr"]["nodes"] > 0


@pytest.mark.parametrize("max_hops", [2, 3])
def test_retrieval_is_two_round_trips_plus_one_per_hop_past_the_second(dulce, fake_llm, max_hops):
    with open_engine(_cfg(dulce, fake_llm, max_hops=max_hops, ranking="score")) as eng:
        rt = eng.runtime.for_run()
        ctx = build_local_context(rt, LocalAsk(QUESTION, budget=3000), eng.config.local)
        assert rt.store.round_trips == ctx.recorder.round_trips == max_hops
        assert ctx.tokens <= 3000 and ctx.chunk_ids
        assert {c.hop for c in ctx.included if c.source == "chunk"} <= {
            "vector",
            "vector+graph",
            "seed_hop",
            "entity_hop",
            "bridge",
        }


def test_derived_budget_keeps_the_whole_call_inside_a_small_window(dulce, fake_llm):
    from driftgraph.llm.tokenizer import count_tokens

    fake_llm.responder = responder
    cfg = make_config(
        dulce,
        llm={"base_url": fake_llm.base_url, "api_key": "test", "max_retries": 0, "model_context_window": 4096},
        local={"answer_reserve": 500},
    )
    with open_engine(cfg) as eng:
        out = eng.query_local(QUESTION).to_dict()
    b = out["trace"]["budget"]
    assert b["context"] == b["derived"] < b["cap"]  # the window, not the cap, limits this deployment
    req = fake_llm.chat_requests()[0]
    sent = sum(count_tokens(m["content"], "cl100k_base") for m in req["messages"])
    assert req["max_tokens"] == 500
    assert sent + req["max_tokens"] <= 4096
    assert sent + req["max_tokens"] >= 4096 - 200  # and the budget was used, not wasted


def test_index_without_reports_claims_or_chunks_still_answers(dulce, fake_llm):
    """Runs late: it deletes the module's reports, claims and chunks."""
    fake_llm.responder = responder
    with open_engine(_cfg(dulce, fake_llm)) as eng:
        eng.store.run("tests/drop_sources")
        out = eng.query_local(QUESTION).to_dict()
    assert set(out["trace"]["absent_sources"]) == {"report", "claim", "chunk"}
    assert out["answer"] == ANSWER
    included = {i["source"] for i in out["trace"]["items"] if i["status"] == "included"}
    assert included and included <= {"entity", "relationship"}


def test_empty_database_is_a_one_line_error(dulce, fake_llm, tmp_path):
    """Runs last: it empties the database."""
    with Store(make_config(dulce).neo4j) as store:
        store.run_auto("admin/reset")
        store.run_auto("admin/drop_schema")
    res = _cli(tmp_path, dulce, fake_llm, QUESTION)
    assert res.returncode == 1 and "import-graphrag" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and "Traceback" not in res.stderr


def test_a_report_that_does_not_fit_enters_as_its_summary_and_caps_hold_the_lead_back(dulce, fake_llm):
    """Thematic route at 2,000 tokens on dulce: reports are 600-1,400 tokens and the lead source may fill only
    half the budget, so a report enters as its summary (the trace says so and why); held-back reports are
    dropped as ``source_cap``; with both mechanisms off the fill is the old one: no short form, no cap."""
    fake_llm.responder = responder
    question = "What are the main themes of Operation: Dulce?"
    with open_engine(_cfg(dulce, fake_llm)) as eng:
        out = eng.query_local(question, context_only=True, budget=2000).to_dict()
    tr = out["trace"]
    assert tr["route"]["shape"] == "thematic" and tr["route"]["caps"] == {"report": 0.5}
    reports = [i for i in tr["items"] if i["source"] == "report" and i["status"] == "included"]
    summaries = [i for i in reports if i.get("form") == "summary"]
    assert summaries, reports
    assert all("did not fit" in i["why"] for i in summaries)
    with Store(_cfg(dulce, fake_llm).neo4j) as store:
        rows = _q(
            store, "MATCH (c:__Community__ {id: $id}) RETURN c.summary AS s, c.full_content AS f", id=summaries[0]["id"]
        )
    assert rows[0]["s"].strip() in out["context"]["text"] and rows[0]["f"].strip() not in out["context"]["text"]
    assert sum(i["tokens"] for i in reports) <= 1000 + 20  # within the cap (a table header at most over)
    assert any(i.get("reason") == "source_cap" for i in tr["items"] if i["status"] == "dropped")
    assert out["context"]["tokens"] <= 2000
    off = {"report_summary": False, "thematic_caps": {"report": 1.0}}
    with open_engine(_cfg(dulce, fake_llm, **off)) as eng:
        old = eng.query_local(question, context_only=True, budget=2000).to_dict()["trace"]
    assert old["route"]["caps"] == {}
    assert not any(i.get("form") for i in old["items"])
    assert {i.get("reason") for i in old["items"] if i["status"] == "dropped"} <= {"budget", "below_threshold"}


def test_round_trips_count_every_statement_and_the_schema_is_checked_once_per_engine(dulce, fake_llm):
    """A stored question's trace counts each statement it sent: retrieval, the trace write and, on an Engine's
    first question only, the schema check. A question running beside it counts none of its statements."""
    ask = {"question": QUESTION, "context_only": True, "budget": 3000}
    with open_engine(_cfg(dulce, fake_llm, max_hops=2, ranking="score")) as eng:
        first = eng.query(LocalQuery(**ask))
        second = eng.query(LocalQuery(**ask))
        unstored = eng.query(LocalQuery(**ask, store_trace=False))
        stored = eng.retrieval(second.retrieval_id)["retrieval"]["trace"]
    assert (first.trace.round_trips, second.trace.round_trips, unstored.trace.round_trips) == (4, 3, 2)
    assert stored["round_trips"] == 3  # what the database holds says the same
