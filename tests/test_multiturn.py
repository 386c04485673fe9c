"""Multi-turn in every mode: history turns picked by relevance, local's RRF of the original and rewritten
question, DRIFT rewriting a follow-up (operation-dulce in a real Neo4j, the fake OpenAI server)."""

from __future__ import annotations

from typing import Any

from driftgraph.api import open_engine
from driftgraph.config import LocalConfig
from driftgraph.llm.tokenizer import count_tokens
from driftgraph.query.budget import Candidate
from driftgraph.query.local.rank import rrf_chunks
from driftgraph.query.requests import DriftQuery, LocalQuery
from driftgraph.query.rewrite import history_text
from tests.conftest import make_config
from tests.support.drift_fakes import DULCE_LAYERS, tree_responder

STANDALONE = "What happened in the mainframe room at Dulce base?"
HISTORY = [
    {"role": "user", "content": "Tell me about the mainframe room at Dulce."},
    {"role": "assistant", "content": "The mainframe room holds the base's central computer."},
    {"role": "user", "content": "Who is Alex Mercer?"},
    {"role": "assistant", "content": "Alex Mercer is an agent of the Paranormal Military Squad."},
]
FOLLOW_UP = "And what happened in the mainframe room then?"


def _count(text: str) -> int:
    return count_tokens(text, "cl100k_base")


def test_history_turns_are_picked_by_relevance_within_the_budget() -> None:
    # room for two turns: the newest (a follow-up refers to it) and the one sharing the question's words
    s = LocalConfig(history_turns=10, history_budget=_count(HISTORY[3]["content"]) + _count(HISTORY[0]["content"]) + 8)
    text = history_text(HISTORY, s, _count, "And what about the mainframe room?")
    assert text.splitlines() == [f"user: {HISTORY[0]['content']}", f"assistant: {HISTORY[3]['content']}"]
    # no shared word: recency decides, newest first
    text = history_text(HISTORY, s, _count, "Why?")
    assert text.splitlines() == [f"user: {HISTORY[2]['content']}", f"assistant: {HISTORY[3]['content']}"]
    assert history_text(HISTORY, LocalConfig(history_turns=0), _count, "x") == ""


def test_rrf_fuses_two_rankings_and_records_both_ranks() -> None:
    def cands(ids: str) -> list[Candidate]:
        return [Candidate("chunk", i, 1, 0.0, rank=n, payload={"text": i}) for n, i in enumerate(ids, 1)]

    out = rrf_chunks([cands("abc"), cands("cad")], k=60)
    assert [c.id for c in out] == ["a", "c", "b", "d"]  # a: 1st + 2nd, c: 3rd + 1st, then single hits
    assert out[0].payload["fused"] == [1, 2] and out[-1].payload["fused"] == [None, 3]


def _responder(inner: Any) -> Any:
    def respond(req: dict[str, Any]) -> str:
        text = "\n".join(m.get("content") or "" for m in req["messages"])
        if "Standalone question:" in text:
            return STANDALONE
        return inner(req)

    return respond


def _cfg(neo4j: dict, fake: Any, **sections: Any) -> Any:
    return make_config(neo4j, llm={"base_url": fake.base_url, "api_key": "test", "max_retries": 0}, **sections)


def test_local_fuses_the_original_and_the_rewritten_question(dulce, fake_llm) -> None:
    fake_llm.responder = _responder(lambda req: "fake answer")
    with open_engine(_cfg(dulce, fake_llm)) as eng:
        res = eng.query(LocalQuery(question=FOLLOW_UP, history=HISTORY, context_only=True, budget=3000))
    rw = res.trace.rewrite
    assert rw is not None and rw.method == "llm" and rw.query == STANDALONE and rw.original == FOLLOW_UP
    fusion = res.trace.extra["fusion"]
    assert fusion["queries"] == [STANDALONE, FOLLOW_UP] and fusion["fused"] >= max(fusion["chunks"])
    assert fusion["chunks"][1] > 0  # the user's own words found chunks too
    # entry, expansion and the bridge's third hop, once per question; the Engine's first question checks the
    # schema; the trace write
    assert res.trace.round_trips == 6 + 1 + 1
    assert res.to_dict()["trace"]["rewrite"]["rewritten"] == STANDALONE


def test_drift_rewrites_a_follow_up_and_a_standalone_question_costs_nothing(dulce, fake_llm) -> None:
    fake_llm.responder = _responder(tree_responder(layers=DULCE_LAYERS))
    with open_engine(_cfg(dulce, fake_llm, drift={"max_depth": 1})) as eng:
        res = eng.query(DriftQuery(question=FOLLOW_UP, history=HISTORY, max_llm_calls=10))
        assert res.trace.rewrite is not None and res.trace.rewrite.query == STANDALONE
        assert res.question == FOLLOW_UP
        assert res.cost.llm_calls == len(fake_llm.chat_requests()) <= 10
        assert res.limits["max_llm_calls"] == 9  # the rewrite call came out of DRIFT's budget
        n = len(fake_llm.chat_requests())
        res = eng.query(DriftQuery(question=STANDALONE, history=HISTORY, max_llm_calls=10))
        assert res.trace.rewrite is not None and res.trace.rewrite.method == "rule"
        assert not any("Standalone question:" in str(c["messages"]) for c in fake_llm.chat_requests()[n:])


def test_drift_reads_its_own_history_keys_not_locals(dulce, fake_llm) -> None:
    """DRIFT's follow-up rewrite picks turns with ``drift.local.history_*``; ``local.history_*`` is local's."""
    fake_llm.responder = _responder(tree_responder(layers=DULCE_LAYERS))
    local_none = {"history_turns": 0, "history_budget": 0}
    drift = {"max_depth": 1, "local": {"history_turns": 1, "history_budget": 1000}}
    with open_engine(_cfg(dulce, fake_llm, local=local_none, drift=drift)) as eng:
        res = eng.query(DriftQuery(question=FOLLOW_UP, history=HISTORY, max_llm_calls=10))
    assert res.trace.rewrite is not None and res.trace.rewrite.method == "llm"
    prompt = fake_llm.chat_requests()[0]["messages"][0]["content"]
    assert "Standalone question:" in prompt and HISTORY[3]["content"] in prompt  # one turn: the newest
    assert HISTORY[0]["content"] not in prompt and HISTORY[2]["content"] not in prompt
    n = len(fake_llm.chat_requests())
    drift["local"] = {"history_turns": 5, "history_budget": 0}  # no room for any turn: nothing to rewrite from
    with open_engine(_cfg(dulce, fake_llm, drift=drift)) as eng:
        res = eng.query(DriftQuery(question=FOLLOW_UP, history=HISTORY, max_llm_calls=10))
    assert res.trace.rewrite is not None and res.trace.rewrite.method != "llm"
    assert not any("Standalone question:" in str(c["messages"]) for c in fake_llm.chat_requests()[n:])
