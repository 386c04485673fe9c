"""The answer check and its one retry (``query/answer_check.py``, ``query/answer.py``) without a database: the
real ``ChatClient`` and openai client against the fake server, and a scripted ``Ask`` where the fake server
cannot say it (a reply cut at ``max_tokens``, a budget that refuses the retry)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from driftgraph.config import LLMConfig, PromptsConfig
from driftgraph.errors import OverBudget
from driftgraph.llm.chat import ChatClient
from driftgraph.llm.ledger import Ledger
from driftgraph.llm.tokenizer import count_tokens
from driftgraph.query.answer import (
    FAILED_MARK,
    AnswerCheck,
    AnswerFailed,
    chat_ask,
    check_line,
    checked_answer,
    with_instruction,
)
from driftgraph.query.answer_check import check_answer, describe

PROMPTS = PromptsConfig()
PARAGRAPH = "The council changed the turbines and appointed Ines Halloran as the new chairwoman of the board."
GOOD = "Alex Mercer leads the team [Data: Sources (1)]."
FULL_CITATION = "[Data: Sources (1, 2); Entities (3, 7); Relationships (4); Reports (2); Claims (5)]"
MESSAGES = [{"role": "system", "content": "Answer from the data."}, {"role": "user", "content": "Who leads?"}]


def count(text: str) -> int:
    return count_tokens(text, "cl100k_base")


@pytest.mark.parametrize(
    ("text", "truncated", "problem"),
    [
        ("", False, "empty"),
        ("   \n", False, "empty"),
        (
            "[Data: Sources (1, 2); Entities (3, 7); Relationships (4); Reports (2); Claims (5)]",
            False,
            "citations_only",
        ),
        ("[Data: Sources (1, 2)] [Data: Reports (2, +more)]", False, "citations_only"),
        ("\n\n".join([PARAGRAPH] * 4), False, "repeated"),
        ("\n\n".join([PARAGRAPH] * 2), False, "repeated"),
        (f"{PARAGRAPH} {PARAGRAPH} {PARAGRAPH}", False, "repeated"),
        ("The storm hit the town and the", True, "truncated"),
        (GOOD, False, None),
        ("Yes. Yes. Yes.", False, None),  # short units repeated are style, not a loop
        (f"{PARAGRAPH}\n\nIt also rebuilt the sea wall after the storm of 2019.", False, None),
    ],
)
def test_check_answer_names_the_problem(text, truncated, problem):
    assert check_answer(text, truncated=truncated) == problem


def _chat(fake: Any) -> tuple[ChatClient, Ledger]:
    ledger = Ledger()
    cfg = LLMConfig(base_url=fake.base_url, api_key="k", backoff_base_s=0, max_retries=0, model="fake")
    return ChatClient(cfg, ledger), ledger


def test_retry_once_with_the_instruction_and_a_smaller_cap(fake_llm):
    fake_llm.responder = lambda req: (
        GOOD if "could not be used" in req["messages"][-1]["content"] else "[Data: Sources (1)]"
    )
    chat, ledger = _chat(fake_llm)
    check = checked_answer(chat_ask(chat, "answer"), MESSAGES, 500, prompts=PROMPTS, count_tokens=count)
    assert check.answer == GOOD and not check.failed and check.retried
    assert [a.problem for a in check.attempts] == ["citations_only", None]
    first, retry = fake_llm.chat_requests()
    assert retry["messages"][0] == first["messages"][0] and len(retry["messages"]) == 2
    instruction = retry["messages"][1]["content"].split("Who leads?\n\n", 1)[1]
    assert describe("citations_only") in instruction
    assert retry["max_tokens"] == 500 - count(instruction) - 2 < first["max_tokens"] == 500
    assert ledger.to_dict(per_phase=True)["answer"]["llm_calls"] == 2
    assert check.to_dict()["problems"] == ["citations_only", None] and check.to_dict()["passed"] is True
    assert check.note() == "answer check: attempt 1 citations_only, attempt 2 ok (the retry's answer was returned)"


def test_a_second_failure_is_no_answer_and_the_stream_says_so(fake_llm):
    fake_llm.responder = lambda req: "\n\n".join([PARAGRAPH] * 4)
    chat, _ = _chat(fake_llm)
    printed: list[str] = []
    check = checked_answer(
        chat_ask(chat, "answer"), MESSAGES, 400, prompts=PROMPTS, count_tokens=count, on_token=printed.append
    )
    assert check.failed and check.answer is None and check.problem == "repeated" and len(check.attempts) == 2
    text = "".join(printed)
    assert text.count(PARAGRAPH) == 8  # both replies were streamed as they came ...
    assert "[driftgraph: that reply is not an answer (" in text  # ... with the reason between them
    assert text.endswith(FAILED_MARK.format(why=describe("repeated")))
    err = check.error("basic")
    assert isinstance(err, AnswerFailed) and err.problem == err.status == "repeated"
    assert str(err).startswith("basic search: the model's reply repeated the same text over and over, on the first")
    err.retrieval_id = "basic-x"
    assert str(err).endswith("`driftgraph trace show basic-x` has the details (retrieval stored)")
    assert "\n" not in str(err)
    line = check_line(check.to_dict())
    assert line == "answer check: attempt 1 repeated, attempt 2 repeated: no answer returned (stop_reason bad_answer)"


@dataclass(frozen=True)
class _Reply:
    text: str
    truncated: bool = False


def test_a_reply_cut_at_max_tokens_is_retried_and_a_refused_retry_is_recorded():
    calls: list[int] = []

    def cut_then_refused(messages: list[dict[str, str]], max_tokens: int, sink: Any) -> _Reply:
        calls.append(max_tokens)
        if len(calls) > 1:
            raise OverBudget("global budget: 0 calls left")
        return _Reply("The storm hit the town and the council", truncated=True)

    check = checked_answer(cut_then_refused, MESSAGES, 300, prompts=PROMPTS, count_tokens=count)
    assert check.failed and [a.problem for a in check.attempts] == ["truncated"] and len(calls) == 2
    assert check.retry_error and "no budget left" in check.retry_error
    assert "no retry could be made" in str(check.error("global"))
    assert "answer_reserve" in str(check.error("global"))  # what to do about a cut reply
    back = AnswerCheck.from_dict(check.to_dict())
    assert back.failed and back.problem == "truncated" and back.retry_error == check.retry_error


def test_with_instruction_keeps_roles_alternating():
    out = with_instruction(MESSAGES, "Answer again.")
    assert [m["role"] for m in out] == ["system", "user"] and out[1]["content"] == "Who leads?\n\nAnswer again."
    assert MESSAGES[1]["content"] == "Who leads?"  # the caller's messages are not changed
    assert with_instruction([{"role": "system", "content": "s"}], "x")[-1] == {"role": "user", "content": "x"}


def test_a_retry_that_copies_the_instruction_first_keeps_only_its_answer(fake_llm):
    """What the 0.5B model did in the real-model run: the retry's reply opened with the corrective instruction,
    word for word, then answered. The copied sentences are removed (counted in the trace); the stream gets a
    restart mark, after which the text is exactly the kept answer."""
    from driftgraph.query.answer import ECHO_MARK

    def reply(req: dict[str, Any]) -> str:
        last = req["messages"][-1]["content"]
        if "could not be used" not in last:
            return "[Data: Sources (1)]"
        instruction = last.split("Who leads?\n\n", 1)[1]
        return f"{instruction}\n\n{GOOD}"

    fake_llm.responder = reply
    chat, _ = _chat(fake_llm)
    shown: list[str] = []
    check = checked_answer(
        chat_ask(chat, "answer"), MESSAGES, 500, prompts=PROMPTS, count_tokens=count, on_token=shown.append
    )
    assert check.answer == GOOD, check.answer
    assert check.echo_stripped > 100 and check.to_dict()["echo_stripped"] == check.echo_stripped
    text = "".join(shown)
    assert text.rsplit(ECHO_MARK, 1)[1] == GOOD


def test_an_answer_that_merely_shares_words_with_the_instruction_is_kept():
    from driftgraph.query.answer import strip_echo

    instruction = "Answer the question again. Write the answer itself in plain sentences."
    kept = "Write the answer itself: the council rebuilt the sea wall in 2020."
    assert strip_echo(kept, instruction) == (kept, 0)
    assert strip_echo("Answer the question again. Yes.", instruction) == ("Answer the question again. Yes.", 0)
    copied = "Write the answer itself in plain sentences. The council rebuilt the sea wall."
    assert strip_echo(copied, instruction) == ("The council rebuilt the sea wall.", 44)
