"""A batch of structured chat calls under the budget: reserve in rank order, run concurrently, repair once.

Determinism under concurrency comes from the order of work, not the order of completion: budget
reservations are taken one by one in the batch's order before any call starts, results are stored by
position, and the second round (one call per unusable reply) is reserved in the same order after the whole
batch has returned.

A reply is unusable when it is malformed (no JSON object with the answer's keys: a repair is asked for with
``prompts/repair_json.txt``) or, for a job with ``check`` set, degenerate (``query/answer_check.py``: empty,
nothing but citation markers, the same paragraph over and over, or cut at ``max_tokens``: it is retried
with ``prompts/drift_retry_answer.txt``). Either way a job gets at most one more call; a second unusable
reply fails the job with both reasons.

A call that fails (API error after retries, timeout) marks its job ``failed`` and the batch goes on. A refusal
(``FatalLLMError``) is kept in ``fatal`` so the loop can end the run as an error.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from driftgraph.errors import FatalLLMError, LLMError, QuestionStopped
from driftgraph.query.answer_check import Problem, check_answer, describe
from driftgraph.query.calls import Budget, Reservation
from driftgraph.query.drift.parse import Parsed, parse_answer


class Chat(Protocol):
    """The part of ``ChatClient`` DRIFT uses (tests pass a scripted stand-in)."""

    def complete(
        self,
        messages: list[dict[str, str]],
        *,
        phase: str,
        max_tokens: int,
        json_schema: dict[str, Any] | None = None,
        on_token: Callable[[str], None] | None = None,
    ) -> Any: ...


@dataclass
class Job:
    """One chat call to make. ``answer_key`` set = a structured answer to parse (else free text)."""

    messages: list[dict[str, str]]
    phase: str
    max_tokens: int
    json_schema: dict[str, Any] | None = None
    answer_key: str | None = None
    on_token: Callable[[str], None] | None = None
    check: bool = False  # a degenerate answer (answer_check.py) is retried once, then the job fails


@dataclass
class JobResult:
    status: str = "skipped"  # done | failed | skipped (no budget: the call was never made)
    text: str = ""
    parsed: Parsed | None = None
    error: str | None = None
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    repaired: bool = False
    attempts: list[str] = field(default_factory=list)
    truncated: bool = False  # the last reply was cut at max_tokens (ChatResult.truncated)
    retried: bool = False  # a degenerate reply was retried (whatever the retry gave)
    problems: list[str] = field(default_factory=list)  # what answer_check found, one name per degenerate reply


@dataclass
class Caller:
    """Runs jobs against one chat client and one budget; ``budget_fired`` latches the first refusal."""

    chat: Chat
    budget: Budget
    count_messages: Callable[[list[dict[str, str]]], int]
    concurrency: int
    repair_message: Callable[[str], str]
    retry_message: Callable[[str], str] | None = None  # the corrective instruction for a degenerate reply
    budget_fired: bool = False
    fatal: LLMError | None = None  # the first refusal (401/403/404): every further call would fail the same way
    last_error: LLMError | None = None  # the last endpoint error of any kind
    answered: int = 0  # calls the endpoint answered

    def run(self, jobs: Sequence[Job], *, after_stop: bool = False) -> list[JobResult]:
        """Results in job order. ``after_stop`` lets the held-back reduce call through a fired budget."""
        results = [JobResult() for _ in jobs]
        reserved = self._reserve(list(enumerate(jobs)), latch=not after_stop)
        self._execute(reserved, results, first=True)
        retry: list[tuple[int, Job]] = []
        for i, job in enumerate(jobs):
            res = results[i]
            if res.status != "done":
                continue
            problem = _verdict(job, res)
            if problem == "malformed":
                res.attempts.append((res.parsed.error if res.parsed else None) or "malformed")
                retry.append((i, self._repair_job(job, res)))
            elif problem is not None:
                res.attempts.append(problem)
                res.problems.append(problem)
                res.retried = True
                retry.append((i, self._retry_job(job, res, problem)))
        return self._finish_repairs(retry, results)

    # -- internals --------------------------------------------------------------------------------------
    def _reserve(self, jobs: list[tuple[int, Job]], latch: bool = True) -> list[tuple[int, Job, Reservation]]:
        """Reservations in order; the first refusal latches ``budget_fired`` and ends the batch there."""
        out: list[tuple[int, Job, Reservation]] = []
        for i, job in jobs:
            if self.budget_fired and latch:
                break
            res = self.budget.reserve(self.count_messages(job.messages))
            if res is None:
                self.budget_fired = True
                break
            out.append((i, job, res))
        return out

    def _execute(self, reserved: list[tuple[int, Job, Reservation]], results: list[JobResult], first: bool) -> None:
        def call(job: Job) -> Any:
            return self.chat.complete(
                job.messages,
                phase=job.phase,
                max_tokens=job.max_tokens,
                json_schema=job.json_schema,
                on_token=job.on_token,
            )

        if not reserved:
            return
        workers = max(1, min(self.concurrency, len(reserved)))
        with ThreadPoolExecutor(max_workers=workers) as pool:
            futures = [(i, res, pool.submit(call, job)) for i, job, res in reserved]
            for i, res, fut in futures:  # collected by position, not by completion
                out = results[i]
                out.calls += 1
                try:
                    reply = fut.result()
                except Exception as err:  # the run goes on; the step says why it failed
                    self.budget.settle(res, res.tokens)
                    if isinstance(err, QuestionStopped):  # unless the whole question must stop
                        raise
                    out.status = "failed"
                    out.error = f"llm error: {type(err).__name__}: {err}"[:300]
                    if isinstance(err, LLMError):
                        self.last_error = err
                        if isinstance(err, FatalLLMError) and self.fatal is None:
                            self.fatal = err
                    continue
                self.answered += 1
                self.budget.settle(res, int(getattr(reply, "prompt_tokens", 0) or 0))
                out.prompt_tokens += int(getattr(reply, "prompt_tokens", 0) or 0)
                out.completion_tokens += int(getattr(reply, "completion_tokens", 0) or 0)
                out.text = reply.text
                out.truncated = bool(getattr(reply, "truncated", False))
                if first:
                    out.status = "done"

    def _repair_job(self, job: Job, res: JobResult) -> Job:
        messages = [
            *job.messages,
            {"role": "assistant", "content": res.text},
            {"role": "user", "content": self.repair_message((res.parsed.error if res.parsed else None) or "malformed")},
        ]
        return Job(messages, job.phase, job.max_tokens, job.json_schema, job.answer_key, check=job.check)

    def _retry_job(self, job: Job, res: JobResult, problem: Problem) -> Job:
        """The same request, the unusable reply, and what was wrong with it: a new request, never a cache hit."""
        say = self.retry_message or self.repair_message
        messages = [
            *job.messages,
            {"role": "assistant", "content": res.text},
            {"role": "user", "content": say(describe(problem))},
        ]
        return Job(messages, job.phase, job.max_tokens, job.json_schema, job.answer_key, check=job.check)

    def _finish_repairs(self, retry: list[tuple[int, Job]], results: list[JobResult]) -> list[JobResult]:
        if not retry:
            return results
        reserved = self._reserve(retry, latch=False) if not self.budget_fired else []
        got = {i for i, _, _ in reserved}
        before = {i: results[i].calls for i, _ in retry}
        self._execute(reserved, results, first=False)
        for i, job in retry:
            res = results[i]
            first_error = res.attempts[0]
            what = "a retry" if res.retried else "a repair"
            first = f"degenerate answer ({first_error})" if res.retried else f"malformed answer ({first_error})"
            if i not in got:
                res.status, res.error = "failed", f"{first}; no budget left for {what}"
                continue
            if res.calls == before[i] or res.error:  # the second call itself failed
                res.status = "failed"
                res.error = f"{first}; {what[2:]} call failed: {res.error}"
                continue
            problem = _verdict(job, res)
            if problem is None:
                res.repaired = res.repaired or not res.retried
                continue
            res.status = "failed"
            if problem == "malformed":
                error = (res.parsed.error if res.parsed else None) or "malformed"
                res.attempts.append(error)
                if res.retried:
                    res.error = f"{first}; the retry was malformed: {error}"
                else:
                    res.error = f"malformed answer after one repair: {error} (first: {first_error})"
                continue
            res.attempts.append(problem)
            res.problems.append(problem)
            after = "one retry" if res.retried else "one repair"
            res.error = f"{first}; after {after}: {describe(problem)}"
        return results


def _verdict(job: Job, res: JobResult) -> Problem | Literal["malformed"] | None:
    """What makes a reply unusable, if anything (parses ``res.parsed`` for a structured job).

    A reply cut at ``max_tokens`` is ``truncated`` even when its JSON is broken: a JSON repair would be cut
    at the same place, a shorter answer is what helps."""
    if job.answer_key is not None:
        res.parsed = parse_answer(res.text, job.answer_key)
    parsed_ok = res.parsed is not None and res.parsed.ok
    if job.check and res.truncated and not parsed_ok:
        return "truncated"
    if job.answer_key is not None and not parsed_ok:
        return "malformed"
    if not job.check:
        return None
    text = res.parsed.answer if res.parsed is not None else res.text
    return check_answer(text, truncated=res.truncated)
