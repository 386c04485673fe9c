"""The retry policy (llm/retry.py): full-jitter backoff drawn from an injected generator, a server's
Retry-After taken as is; and the rerank endpoint retried by the same policy within ``*.rerank``'s own settings
(the fake ``/rerank`` server, real HTTP), on its own and inside a local search on operation-dulce."""

from __future__ import annotations

import email.message
import random
import urllib.error
from collections.abc import Callable

import pytest

from driftgraph.api import open_engine
from driftgraph.config import RerankConfig
from driftgraph.errors import RerankError
from driftgraph.llm.retry import MAX_WAIT_S, SYSTEM_JITTER, backoff_wait, with_retries
from driftgraph.query.rerank import endpoint_scores
from tests.conftest import make_config
from tests.support.fake_rerank import FakeRerank

DOCS = ["Bob built engines.", "Nothing here at all.", "Cy wrote about Ada and Bob."]


def _failing(times: int, err: Exception) -> tuple[list[int], Callable[[], str]]:
    calls: list[int] = []

    def call() -> str:
        calls.append(1)
        if len(calls) <= times:
            raise err
        return "done"

    return calls, call


def _http_error(code: int, retry_after: str | None = None) -> urllib.error.HTTPError:
    headers = email.message.Message()
    if retry_after is not None:
        headers["Retry-After"] = retry_after
    return urllib.error.HTTPError("http://x/rerank", code, "fake", headers, None)


# -- the backoff ------------------------------------------------------------------------------------------------
def test_waits_are_full_jitter_below_the_capped_doubling_ceiling() -> None:
    calls, call = _failing(4, ConnectionError("reset"))
    sleeps: list[float] = []
    policy = RerankConfig(max_retries=5, backoff_base_s=10.0)
    assert with_retries(call, policy, sleeps.append, rng=random.Random(7)) == "done"
    ceilings = [10.0, 20.0, 40.0, MAX_WAIT_S]  # 80 is capped at 60
    same = random.Random(7)
    assert sleeps == [same.uniform(0.0, c) for c in ceilings]  # every draw from the injected generator
    assert all(0.0 <= s <= c for s, c in zip(sleeps, ceilings, strict=True)) and len(calls) == 5
    assert sleeps != ceilings  # not the old fixed exponential waits
    other: list[float] = []
    with_retries(_failing(4, ConnectionError("reset"))[1], policy, other.append, rng=random.Random(8))
    assert other != sleeps  # another client draws other waits: they do not come back in step


def test_a_retry_after_is_honoured_as_is_and_draws_no_jitter() -> None:
    rng = random.Random(3)
    state = rng.getstate()
    sleeps: list[float] = []
    _, call = _failing(1, _http_error(429, retry_after="7"))
    assert with_retries(call, RerankConfig(backoff_base_s=0.01), sleeps.append, rng=rng) == "done"
    assert sleeps == [7.0] and rng.getstate() == state
    assert backoff_wait(0, 1.0, asked=3600.0) == MAX_WAIT_S  # a server cannot park a client for an hour
    assert backoff_wait(5, 0.0, rng=rng) == 0.0 and rng.getstate() == state  # no backoff configured: no draw


def test_the_default_jitter_is_the_system_generator_and_stops_after_max_retries() -> None:
    assert isinstance(SYSTEM_JITTER, random.SystemRandom)
    assert all(0.0 <= backoff_wait(2, 0.5) <= 2.0 for _ in range(50))
    calls, call = _failing(10, _http_error(503))
    sleeps: list[float] = []
    with pytest.raises(urllib.error.HTTPError):
        with_retries(call, RerankConfig(max_retries=2, backoff_base_s=0.0), sleeps.append)
    assert len(calls) == 3 and sleeps == [0.0, 0.0]
    calls, call = _failing(10, _http_error(400))
    with pytest.raises(urllib.error.HTTPError):
        with_retries(call, RerankConfig(max_retries=2), sleeps.append)
    assert len(calls) == 1  # a 400 is the request's fault: asking again cannot help


# -- the rerank endpoint -----------------------------------------------------------------------------------------
def test_the_rerank_endpoint_is_retried_after_a_503_and_not_after_a_400() -> None:
    with FakeRerank() as server:
        cfg = RerankConfig(provider="endpoint", base_url=server.base_url, max_retries=2, backoff_base_s=0.25)
        server.fail_next = [503]
        sleeps: list[float] = []
        scores = endpoint_scores(cfg, "who wrote about ada", DOCS, sleeps.append, random.Random(1))
        assert len(server.requests) == 2 and len(sleeps) == 1 and 0.0 <= sleeps[0] <= 0.25
        assert scores.index(max(scores)) == 2  # the answer of the retry is the one used
        server.fail_next, server.retry_after, sleeps[:] = [429], "2", []
        endpoint_scores(cfg, "ada", DOCS, sleeps.append)
        assert sleeps == [2.0]  # the rerank server's Retry-After, read off urllib's error
        server.requests.clear()
        server.fail_next = [400]
        with pytest.raises(RerankError, match="HTTP 400$"):
            endpoint_scores(cfg, "ada", DOCS, sleeps.append)
        assert len(server.requests) == 1
        server.requests.clear()
        server.status = 503
        with pytest.raises(RerankError, match=r"HTTP 503 \(3 attempts\)"):
            endpoint_scores(cfg, "ada", DOCS, sleeps.append)
        assert len(server.requests) == 3  # 1 + max_retries


def test_a_refused_connection_is_retried_then_named() -> None:
    cfg = RerankConfig(provider="endpoint", base_url="http://127.0.0.1:9", timeout_s=2, max_retries=1)
    sleeps: list[float] = []
    with pytest.raises(RerankError, match=r"unreachable \(2 attempts\)"):
        endpoint_scores(cfg, "ada", DOCS, sleeps.append, random.Random(0))
    assert len(sleeps) == 1


Q = "Who leads the team at Dulce base?"


def test_a_local_search_survives_one_503_from_its_reranker(dulce, fake_llm) -> None:
    llm = {"base_url": fake_llm.base_url, "api_key": "test", "max_retries": 0}
    with FakeRerank() as server:
        rr = {"provider": "endpoint", "base_url": server.base_url, "top_n": 3, "backoff_base_s": 0.0}
        with open_engine(make_config(dulce, llm=llm, local={"rerank": rr})) as eng:
            server.fail_next = [503]
            res = eng.query_local(Q, context_only=True, budget=2000)
            assert len(server.requests) == 2 and res.context.tokens > 0
            assert any(i.rerank_score is not None for i in res.trace.items)
            server.requests.clear()
            server.fail_next = [400]
            with pytest.raises(RerankError, match="HTTP 400"):
                eng.query_local(Q, context_only=True, budget=2000)
            assert len(server.requests) == 1
