"""The OpenAI Batch API (``/v1/files`` + ``/v1/batches``; Azure's is the same API): one round of requests.

A round is a set of chat requests keyed by their call-cache key (the ``custom_id`` of each JSONL line). Its
state file under ``<cache_dir>/batches/`` names the batch id before the first poll, so a re-run after a crash
finds the batch and goes on polling instead of submitting it again (and paying twice). Answers are written to
the call cache under the same keys, which is all the pipeline ever reads: a batch run and a direct run build
the same graph. A failed line (its error, or a non-200 status) is returned as a failure for that key.
"""

from __future__ import annotations

import hashlib
import io
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from driftgraph.config import Config
from driftgraph.errors import FatalLLMError, LLMUnavailable
from driftgraph.llm.cache import CallCache
from driftgraph.llm.client import make_openai_client

DONE = {"completed"}
DEAD = {"failed", "expired", "cancelled", "cancelling"}


def round_id(keys: list[str]) -> str:
    """The same requests always make the same round (the resume key)."""
    return hashlib.sha256("\n".join(sorted(keys)).encode()).hexdigest()[:24]


def run_round(
    cfg: Config,
    stage: str,
    requests: dict[str, dict[str, Any]],
    cache: CallCache,
    on_progress: Callable[[int, int], None] | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> dict[str, str]:
    """Submit (or resume) the batch of ``requests`` (cache key -> chat params), wait for it, fill the cache.

    Returns ``{key: error}`` for the lines that failed; every other key is in the cache afterwards."""
    icfg = cfg.index
    client = make_openai_client(cfg.llm)
    rid = round_id(list(requests))
    state_path = Path(icfg.cache_dir) / "batches" / f"{stage}-{rid}.json"
    state = json.loads(state_path.read_text()) if state_path.is_file() else None
    if state is None or state.get("status") in DEAD | DONE:  # done: its answers were used and evicted since
        lines = "".join(
            json.dumps({"custom_id": k, "method": "POST", "url": "/v1/chat/completions", "body": p}) + "\n"
            for k, p in requests.items()
        )
        upload = _call(
            lambda: client.files.create(file=(f"{stage}.jsonl", io.BytesIO(lines.encode())), purpose="batch")
        )
        batch = _call(
            lambda: client.batches.create(
                input_file_id=upload.id,
                endpoint="/v1/chat/completions",
                completion_window=icfg.batch_completion_window,  # type: ignore[arg-type]
                metadata={"driftgraph_stage": stage, "driftgraph_round": rid},
            )
        )
        state = {"batch_id": batch.id, "input_file_id": upload.id, "stage": stage, "requests": len(requests)}
        state_path.parent.mkdir(parents=True, exist_ok=True)
        state_path.write_text(json.dumps(state))
    wait = icfg.batch_poll_initial_s
    deadline = time.monotonic() + icfg.batch_timeout_s
    while True:
        batch = _call(lambda: client.batches.retrieve(state["batch_id"]))
        counts = batch.request_counts
        if on_progress is not None and counts is not None:
            on_progress(counts.completed + counts.failed, counts.total or len(requests))
        if batch.status in DONE:
            break
        if batch.status in DEAD:
            state_path.write_text(json.dumps({**state, "status": batch.status}))
            raise LLMUnavailable(f"batch {batch.id} ({stage}) ended {batch.status}: re-run to submit it again")
        if time.monotonic() > deadline:
            raise LLMUnavailable(
                f"batch {batch.id} ({stage}) still {batch.status} after {icfg.batch_timeout_s:.0f} s: "
                "re-run later, it resumes polling"
            )
        sleep(wait)
        wait = min(wait * 2, icfg.batch_poll_max_s)
    failures: dict[str, str] = {}
    for file_id in (batch.output_file_id, batch.error_file_id):
        if file_id:
            failures.update(_store_lines(_download(client, file_id), cache))
    for key in requests:
        if key not in failures and cache.get(key) is None:
            failures[key] = "no answer in the batch output"
    state_path.write_text(json.dumps({**state, "status": "completed", "failed": len(failures)}))
    return failures


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


def _download(client: Any, file_id: str) -> str:
    return str(_call(lambda: client.files.content(file_id).text))


def _call(fn: Callable[[], Any]) -> Any:
    """Batch endpoint errors as the LLM errors of a direct run (a refused key stops; the rest is retryable)."""
    import openai

    try:
        return fn()
    except (openai.AuthenticationError, openai.PermissionDeniedError, openai.NotFoundError) as err:
        raise FatalLLMError(f"batch API refused: {err}", status=err.status_code) from None
    except openai.OpenAIError as err:
        raise LLMUnavailable(f"batch API error: {err}") from None
