"""Multi-turn global search: a follow-up rewritten into a standalone question within the call budget
(operation-dulce in a real Neo4j, the fake OpenAI server)."""

from __future__ import annotations

from driftgraph.api import open_engine
from driftgraph.query.requests import GlobalQuery
from tests.support import global_fake
from tests.test_multiturn import FOLLOW_UP, HISTORY, STANDALONE, _cfg, _responder


def test_global_rewrites_a_follow_up_within_its_call_budget(dulce, fake_llm) -> None:
    fake_llm.responder = _responder(global_fake.responder)
    with open_engine(_cfg(dulce, fake_llm, global_={"map_cap": 3000})) as eng:
        res = eng.query(GlobalQuery(question=FOLLOW_UP, history=HISTORY, max_llm_calls=6))
    assert res.question == FOLLOW_UP
    assert res.trace.rewrite is not None and res.trace.rewrite.query == STANDALONE
    calls = fake_llm.chat_requests()
    assert "Standalone question:" in calls[0]["messages"][0]["content"]
    assert all(STANDALONE in str(c["messages"]) for c in calls[1:])  # the map and reduce see the rewrite
    assert res.cost.llm_calls == len(calls) <= 6
