"""The OpenAI Batch API (``/v1/files`` + ``/v1/batches``; Azure's is the same API): one round of requests, paid once.

A round is a set of chat requests keyed by their call-cache key (the ``custom_id`` of each JSONL line); the
round id hashes those keys and goes to the provider as the batch's metadata (``driftgraph_stage``,
``driftgraph_round``). Exactly once rests on two records:

- the state file ``<cache_dir>/batches/<stage>-<round>.json``, replaced atomically, says "submitting since T"
  before the upload and names the batch id right after the create, so a re-run resumes polling;
- the provider's batch list: before any create (and before retrying a create that failed, which the server
  may still have accepted) the round's tag is looked up there, so a crash or a timeout between the create and
  the state write finds the batch instead of paying for it twice. Only a live batch, or a completed one whose
  output is still downloadable, is taken; batches whose answers were already read are never taken again.

Answers are written to the call cache under their keys, which is all the pipeline ever reads: a batch run and
a direct run build the same graph. A batch that expires keeps what it answered (into the cache) and the rest is
submitted again; a failed line (its error, or a non-200 status) is returned as a failure for that key. Every
Batch API call is retried like a chat call (``llm.max_retries``, ``llm/retry.py``): one 5xx does not end a
day-long run.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from driftgraph.config import Config
from driftgraph.errors import FatalLLMError, LLMUnavailable
from driftgraph.llm.cache import CallCache
from driftgraph.llm.client import make_openai_client
from driftgraph.llm.retry import with_retries

log = logging.getLogger(__name__)
T = TypeVar("T")

DONE = "completed"
LIVE = frozenset({"validating", "in_progress", "finalizing"})  # will answer: a lookup may take it
DEAD = frozenset({"failed", "expired", "cancelled"})  # answered what it will ("cancelling" is polled on)
SUBMITTING = "submitting"
STAGE_KEY, ROUND_KEY = "driftgraph_stage", "driftgraph_round"
SKEW_S = 600.0  # the provider's clock may run behind ours: look this much further back than "submitting since"
LOOKBACK_S = 7 * 86_400.0  # with no record of a submission, batches older than this are not looked at
PAGE = 100


def round_id(keys: list[str]) -> str:
    """The same requests always make the same round (the resume key)."""
    return hashlib.sha256("\n".join(sorted(keys)).encode()).hexdigest()[:24]


@dataclass
class _Ctx:
    """What every step of a round needs."""

    cfg: Config
    client: Any  # openai.OpenAI / AzureOpenAI
    stage: str
    cache: CallCache
    sleep: Callable[[float], None]
    deadline: float

    def retry(self, call: Callable[[], T]) -> T:
        return with_retries(call, self.cfg.llm, self.sleep, on_retry=_log_retry)


def _log_retry(err: BaseException) -> None:
    log.warning("batch API call failed (%s): retrying", err)


def run_round(
    cfg: Config,
    stage: str,
    requests: dict[str, dict[str, Any]],
    cache: CallCache,
    on_progress: Callable[[int, int], None] | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> dict[str, str]:
    """Submit (or find, or resume) the batch of ``requests`` (cache key -> chat params), wait, fill the cache.

    Returns ``{key: error}`` for the lines that failed; every other key is in the cache afterwards. An expired
    batch's answers are kept and only the unanswered requests go in the next batch, while time remains."""
    ctx = _Ctx(cfg, make_openai_client(cfg.llm), stage, cache, sleep, time.monotonic() + cfg.index.batch_timeout_s)
    todo = {k: p for k, p in requests.items() if cache.get(k) is None}  # an earlier batch's kept answers
    with _sdk_errors():
        while todo:
            path = state_path(cfg, stage, round_id(list(todo)))
            state = read_state(path)
            batch_id = _submitted(ctx, path, state, todo)
            batch = _wait(ctx, batch_id, on_progress, len(requests) - len(todo), len(requests))
            failures = _harvest(ctx, batch)
            record = read_state(path)
            state = {**record, "status": batch.status, "used": [*_used(record), batch.id]}
            if batch.status == DONE:
                for key in todo:
                    if key not in failures and cache.get(key) is None:
                        failures[key] = "no answer in the batch output"
                write_state(path, {**state, "failed": len(failures)})
                return failures
            write_state(path, state)
            rest = {k: p for k, p in todo.items() if cache.get(k) is None}
            if not rest:
                return {}
            if batch.status != "expired" or time.monotonic() > ctx.deadline:
                raise LLMUnavailable(
                    f"batch {batch.id} ({stage}) ended {batch.status} with {len(todo) - len(rest)} of {len(todo)} "
                    f"requests answered (kept): re-run to submit the other {len(rest)}"
                )
            log.warning("batch %s (%s) expired: %d answers kept, %d submitted again", batch.id, stage,
                        len(todo) - len(rest), len(rest))  # fmt: skip
            todo = rest
    return {}


def state_path(cfg: Config, stage: str, rid: str) -> Path:
    return Path(cfg.index.cache_dir) / "batches" / f"{stage}-{rid}.json"


def read_state(path: Path) -> dict[str, Any]:
    """The round's record, ``{}`` if none (or unreadable: the provider's batch list is looked up instead)."""
    try:
        state = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return state if isinstance(state, dict) else {}


def write_state(path: Path, state: dict[str, Any]) -> None:
    """Replace the record atomically (temp file in the same folder, fsync, rename): a crash mid-write leaves
    the old record or the new one, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(state, fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    try:  # the rename itself survives a power cut once the folder is synced (not possible on Windows)
        dir_fd = os.open(path.parent, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def _used(state: dict[str, Any]) -> list[str]:
    """Batches of this round whose answers were read already: never taken again (an answer evicted since as
    unusable must be asked anew, not read from the same output)."""
    used = list(state.get("used") or [])
    if state.get("status") in DEAD | {DONE} and state.get("batch_id") and state["batch_id"] not in used:
        used.append(state["batch_id"])
    return used


def _submitted(ctx: _Ctx, path: Path, state: dict[str, Any], todo: dict[str, dict[str, Any]]) -> str:
    """The id of the round's batch: the one the record names, else one the provider holds under the round's
    tag, else a new one (recorded before and after the create)."""
    if state.get("batch_id") and state.get("status") not in DEAD | {DONE}:
        return str(state["batch_id"])
    rid = round_id(list(todo))
    used = _used(state)
    since = state.get("since") if state.get("status") == SUBMITTING else None
    record = {"stage": ctx.stage, "requests": len(todo), "used": used}
    found = _find(ctx, rid, used, since)
    if found is None:
        since = since or time.time()
        write_state(path, {**record, "status": SUBMITTING, "since": since})
        lines = "".join(
            json.dumps({"custom_id": k, "method": "POST", "url": "/v1/chat/completions", "body": p}) + "\n"
            for k, p in todo.items()
        )
        upload = ctx.retry(
            lambda: ctx.client.files.create(file=(f"{ctx.stage}.jsonl", io.BytesIO(lines.encode())), purpose="batch")
        )
        found = _create(ctx, rid, upload.id, used, since)
    write_state(path, {**record, "batch_id": found.id, "input_file_id": found.input_file_id, "since": since})
    return str(found.id)


def _create(ctx: _Ctx, rid: str, input_file_id: str, used: list[str], since: float) -> Any:
    """``batches.create``, retried; before a retry the tag is looked up, as the failed create (a timeout, a
    dropped connection) may have been accepted."""
    tries = 0

    def attempt() -> Any:
        nonlocal tries
        tries += 1
        if tries > 1:
            found = _find(ctx, rid, used, since)
            if found is not None:
                return found
        return ctx.client.batches.create(
            input_file_id=input_file_id,
            endpoint="/v1/chat/completions",
            completion_window=ctx.cfg.index.batch_completion_window,
            metadata={STAGE_KEY: ctx.stage, ROUND_KEY: rid},
        )

    return ctx.retry(attempt)


def _find(ctx: _Ctx, rid: str, used: list[str], since: float | None) -> Any | None:
    """The newest batch the provider holds under this round's tag that will still answer, or did and whose
    output can still be downloaded; pages newest first, back to ``since`` (or ``LOOKBACK_S``)."""
    oldest = (since - SKEW_S) if since is not None else time.time() - LOOKBACK_S
    after: str | None = None
    while True:
        page = _page(ctx, after)
        for batch in page.data:
            if batch.created_at < oldest:
                return None
            meta = batch.metadata or {}
            if meta.get(STAGE_KEY) != ctx.stage or meta.get(ROUND_KEY) != rid or batch.id in used:
                continue
            if batch.status in LIVE or (batch.status == DONE and _downloadable(ctx, batch.output_file_id)):
                return batch
        if not page.data or not page.has_more:
            return None
        after = page.data[-1].id


def _page(ctx: _Ctx, after: str | None) -> Any:
    batches = ctx.client.batches
    return ctx.retry(lambda: batches.list(limit=PAGE, after=after) if after else batches.list(limit=PAGE))


def _downloadable(ctx: _Ctx, file_id: str | None) -> bool:
    import openai

    if not file_id:
        return False
    try:
        ctx.retry(lambda: ctx.client.files.retrieve(file_id))
    except openai.NotFoundError:  # the provider deleted it: the answers are gone
        return False
    return True


def _wait(ctx: _Ctx, batch_id: str, on_progress: Callable[[int, int], None] | None, before: int, total: int) -> Any:
    """Poll with backoff until the batch is completed or dead; ``before`` answers came from earlier batches."""
    icfg = ctx.cfg.index
    wait = icfg.batch_poll_initial_s
    while True:
        batch = ctx.retry(lambda: ctx.client.batches.retrieve(batch_id))
        counts = batch.request_counts
        if on_progress is not None and counts is not None:
            on_progress(before + counts.completed + counts.failed, total)
        if batch.status == DONE or batch.status in DEAD:
            return batch
        if time.monotonic() > ctx.deadline:
            raise LLMUnavailable(
                f"batch {batch.id} ({ctx.stage}) still {batch.status} after {icfg.batch_timeout_s:.0f} s: "
                "re-run later, it resumes polling"
            )
        ctx.sleep(wait)
        wait = min(wait * 2, icfg.batch_poll_max_s)


def _harvest(ctx: _Ctx, batch: Any) -> dict[str, str]:
    """Every line the batch answered into the cache (a dead batch's too: they were paid for); line failures."""
    failures: dict[str, str] = {}
    for file_id in (batch.output_file_id, batch.error_file_id):
        if file_id:
            failures.update(_store_lines(_download(ctx, file_id), ctx.cache))
    return failures


def _download(ctx: _Ctx, file_id: str) -> str:
    """Request and body in one retried call: a stream cut mid-file is fetched again whole."""
    return ctx.retry(lambda: str(ctx.client.files.content(file_id).text))


def _store_lines(text: str, cache: CallCache) -> dict[str, str]:
    """Each output line's answer into the cache under its custom_id; failed lines come back as errors."""
    failures: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        key = row["custom_id"]
        response = row.get("response") or {}
        body = response.get("body") or {}
        if row.get("error") or response.get("status_code") != 200 or not body.get("choices"):
            err = row.get("error") or body.get("error") or {"message": f"status {response.get('status_code')}"}
            failures[key] = f"batch line failed: {err.get('message', err) if isinstance(err, dict) else err}"
            continue
        usage = body.get("usage") or {}
        cache.put(
            key,
            {
                "text": body["choices"][0]["message"].get("content") or "",
                "prompt_tokens": int(usage.get("prompt_tokens") or 0),
                "completion_tokens": int(usage.get("completion_tokens") or 0),
            },
        )
    return failures


@contextmanager
def _sdk_errors() -> Iterator[None]:
    """Batch endpoint errors (after their retries) as the LLM errors of a direct run: a refused key stops,
    the rest is unavailable."""
    import openai

    try:
        yield
    except (openai.AuthenticationError, openai.PermissionDeniedError, openai.NotFoundError) as err:
        raise FatalLLMError(f"batch API refused: {err}", status=err.status_code) from None
    except openai.OpenAIError as err:
        raise LLMUnavailable(f"batch API error: {err}") from None
