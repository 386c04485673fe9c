import pytest

from driftgraph.config import LLMConfig
from driftgraph.llm.chat import ChatClient, schema
from driftgraph.llm.ledger import Ledger


def _client(fake, **kw):
    return ChatClient(LLMConfig(base_url=fake.base_url, api_key="k", backoff_base_s=0, **kw), Ledger())


def test_chat_records_cost_per_phase(fake_llm):
    fake_llm.responder = lambda req: "hello there"
    chat = _client(fake_llm)
    res = chat.complete([{"role": "user", "content": "x" * 400}], phase="answer", max_tokens=50)
    assert res.text == "hello there"
    assert chat.ledger.phases["answer"].llm_calls == 1
    assert chat.ledger.phases["answer"].prompt_tokens == res.prompt_tokens > 0
    assert fake_llm.chat_requests()[0]["max_tokens"] == 50


def test_retries_on_429_and_5xx_then_succeeds(fake_llm):
    fake_llm.fail_next = [429, 503]
    chat = _client(fake_llm, max_retries=3)
    assert chat.complete([{"role": "user", "content": "q"}], phase="p", max_tokens=5).text == "fake answer"
    assert len(fake_llm.chat_requests()) == 3
    assert chat.ledger.total.llm_calls == 1


def test_gives_up_after_max_retries(fake_llm):
    import openai

    from driftgraph.errors import LLMUnavailable

    fake_llm.fail_next = [500, 500, 500]
    chat = _client(fake_llm, max_retries=1)
    with pytest.raises(LLMUnavailable, match="answered 500 after 1 retries") as info:
        chat.complete([{"role": "user", "content": "q"}], phase="p", max_tokens=5)
    assert isinstance(info.value.__cause__, openai.InternalServerError) and info.value.status == 500
    assert len(fake_llm.chat_requests()) == 2
    total = chat.ledger.total
    assert (total.llm_calls, total.http_attempts, total.retries, total.failed_calls) == (0, 2, 1, 1)


def test_client_errors_are_not_retried(fake_llm):
    import openai

    from driftgraph.errors import LLMRequestRejected

    fake_llm.fail_next = [400]
    chat = _client(fake_llm, max_retries=3)
    refused = r"127\.0\.0\.1.*refused the request \(400\): \"scripted 400\""
    with pytest.raises(LLMRequestRejected, match=refused) as info:
        chat.complete([{"role": "user", "content": "q"}], phase="p", max_tokens=5)
    assert isinstance(info.value.__cause__, openai.BadRequestError)
    assert len(fake_llm.chat_requests()) == 1


def test_json_schema_is_sent_and_can_be_disabled(fake_llm):
    s = schema("answer", {"score": {"type": "integer"}})
    _client(fake_llm).complete([{"role": "user", "content": "q"}], phase="p", max_tokens=5, json_schema=s)
    _client(fake_llm, json_schema=False).complete(
        [{"role": "user", "content": "q"}], phase="p", max_tokens=5, json_schema=s
    )
    first, second = fake_llm.chat_requests()
    assert first["response_format"]["json_schema"]["name"] == "answer"
    assert "response_format" not in second


def test_streaming_delivers_tokens_and_usage(fake_llm):
    fake_llm.responder = lambda req: "one two three"
    seen = []
    chat = _client(fake_llm)
    res = chat.complete([{"role": "user", "content": "q"}], phase="p", max_tokens=5, on_token=seen.append)
    assert "".join(seen) == "one two three" == res.text
    assert res.completion_tokens > 0 and chat.ledger.total.llm_calls == 1


@pytest.mark.parametrize(
    ("retried", "restarted"),
    [("The answer starts here and ends.", False), ("A different reply altogether.", True)],
)
def test_a_retried_stream_never_splices_two_replies(fake_llm, retried, restarted):
    """The stream breaks after "The answer starts here "; the retry either continues that text (shown once) or
    differs (a restart mark, then the whole new reply): the text after the last mark is the kept answer."""
    from driftgraph.llm.chat import RESTART_MARK

    fake_llm.responder = lambda req: retried
    fake_llm.set_fault("stream_cut", times=1)
    chat = _client(fake_llm, max_retries=2)
    shown: list[str] = []
    res = chat.complete([{"role": "user", "content": "q"}], phase="answer", max_tokens=50, on_token=shown.append)
    text = "".join(shown)
    assert res.text == retried
    assert (RESTART_MARK in text) is restarted
    assert text.rsplit(RESTART_MARK, 1)[-1] == res.text, text
    assert text.count("The answer starts here") == 1, "shown once, whichever way the retry went"


def test_a_question_deadline_cuts_a_hung_call_and_a_retry_wait(fake_llm):
    """A hung endpoint: the call is given up on at the deadline, not at llm.timeout_s (120 s), and no retry
    follows; the error names the stage."""
    import threading
    import time

    from driftgraph.deadline import Deadline
    from driftgraph.errors import QuestionStopped

    release = threading.Event()
    fake_llm.delay = lambda req: float(release.wait(60)) * 0.0
    chat = ChatClient(
        LLMConfig(base_url=fake_llm.base_url, api_key="k", max_retries=3), Ledger(), deadline=Deadline(1.0)
    )
    start = time.monotonic()
    try:
        with pytest.raises(QuestionStopped) as info:
            chat.complete([{"role": "user", "content": "q"}], phase="answer", max_tokens=5)
    finally:
        release.set()
    assert time.monotonic() - start < 10
    assert info.value.reason == "deadline" and "an LLM call (answer)" in str(info.value)
    assert len(fake_llm.chat_requests()) == 1, "no retry after the deadline"
