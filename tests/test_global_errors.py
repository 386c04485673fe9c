"""Global and basic search on a database without the data they need: one clear error or a stated absence."""

from __future__ import annotations

import pytest

from driftgraph.api import open_engine
from driftgraph.errors import QuestionError
from driftgraph.query.global_.select import NoReportsError
from tests.conftest import make_config
from tests.support.global_fake import responder


def test_empty_database_and_empty_question(neo4j_cfg, neo4j_config, fake_llm):
    fake_llm.responder = responder
    cfg = make_config(neo4j_config, llm={"base_url": fake_llm.base_url, "api_key": "t", "max_retries": 0})
    with open_engine(cfg) as eng:
        eng.ensure_schema()
        with pytest.raises(NoReportsError, match="no community reports.*import-graphrag"):
            eng.query_global("What are the main themes?")
        with pytest.raises(NoReportsError):
            eng.query_global("What are the main themes?", dynamic=True)
        with pytest.raises(QuestionError):
            eng.query_global("   ")
        res = eng.query_basic("Anything at all?")
    assert res.stop_reason == "no_chunks" and res.trace.absent_sources == ["chunk"]
    assert res.answer and res.context.tokens == 0 and fake_llm.chat_requests() == []
