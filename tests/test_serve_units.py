"""The serve layer's parts without a server: the busy gate and time limit, exposure and key checks, the error map."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from driftgraph.config import ServeConfig
from driftgraph.errors import (
    ConfigError,
    FatalLLMError,
    HistoryError,
    QuestionStopped,
    RetrievalNotFound,
    StoreError,
)
from driftgraph.serve.auth import api_key_from_env, authorized, check_exposure, is_loopback, keys, needs_auth
from driftgraph.serve.errors import ApiError, from_exception, validation_error
from driftgraph.serve.runner import Runner


def test_gate_refuses_with_429_and_the_slot_outlives_a_504() -> None:
    release = threading.Event()
    runner = Runner(ServeConfig(max_concurrency=1, request_timeout_s=0.2, retry_after_s=3))

    async def scenario() -> None:
        slow = runner.start(release.wait, 30)
        with pytest.raises(ApiError) as busy:
            runner.start(time.sleep, 0)
        assert busy.value.status == 429 and busy.value.headers == {"Retry-After": "3"}
        with pytest.raises(ApiError) as late:
            await runner.wait(slow)
        assert late.value.status == 504 and late.value.code == "timeout"
        assert runner.running == 1, "a timed-out question keeps its slot until its thread ends"
        release.set()
        await slow
        assert runner.running == 0
        assert await runner.call(lambda: 42) == 42

    asyncio.run(scenario())
    assert runner.drain(1.0)
    with pytest.raises(ApiError) as stopping:
        runner.start(time.sleep, 0)
    assert stopping.value.status == 503


def test_a_question_cancelled_by_the_shutdown_is_not_reported_as_a_timeout() -> None:
    """The race CI met: the waiting request woke after ``cancel_all`` but before the question raised its stop."""
    runner = Runner(ServeConfig(request_timeout_s=60))
    deadline = runner.deadline()
    cancelled = threading.Event()

    def question() -> None:
        cancelled.wait(30)
        time.sleep(0.6)  # longer than the request's poll: it sees the cancel before the question ends
        deadline.check("the model call")

    async def scenario() -> None:
        fut = runner.start(question, deadline=deadline)
        waiting = asyncio.ensure_future(runner.wait(fut, deadline, disconnected=_never))
        await asyncio.sleep(0.1)
        runner.cancel_all()
        cancelled.set()
        with pytest.raises(QuestionStopped) as stopped:
            await waiting
        assert stopped.value.reason == "cancelled"
        assert from_exception(stopped.value).status == 503

    asyncio.run(scenario())


async def _never() -> bool:
    return False


def test_loopback_only_without_a_key() -> None:
    for host in ("127.0.0.1", "localhost", "::1", "[::1]", "127.0.0.2"):
        assert is_loopback(host)
        check_exposure(host, None)
    for host in ("0.0.0.0", "192.168.1.5", "example.com", "::"):
        with pytest.raises(ConfigError, match="DRIFTGRAPH_API_KEY"):
            check_exposure(host, None)
        check_exposure(host, "a-key")


def test_bearer_check_and_protected_paths() -> None:
    one = keys("k3y")
    assert authorized("Bearer k3y", one) and authorized("bearer k3y", one)
    assert not authorized(None, one) and not authorized("Bearer k3", one) and not authorized("Basic k3y", one)
    assert needs_auth("/v1/models") and needs_auth("/mcp") and needs_auth("/retrievals/x") and needs_auth("/v1")
    assert needs_auth("/metrics")
    # several keys (rotation): any one is accepted, the list itself is not a key, empty parts are no key
    both = keys("old, new")
    assert authorized("Bearer old", both) and authorized("Bearer new", both)
    assert not authorized("Bearer old, new", both) and not authorized("Bearer ", keys("old,,new"))
    assert keys(" a ,, b ,") == ["a", "b"] and keys(" , ") == []


def test_a_key_variable_with_no_key_in_it_is_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DRIFTGRAPH_API_KEY", " , ")
    assert api_key_from_env() is None
    with pytest.raises(ConfigError):
        check_exposure("0.0.0.0", api_key_from_env())
    monkeypatch.setenv("DRIFTGRAPH_API_KEY", " old,new ")
    assert api_key_from_env() == "old,new"
    assert not needs_auth("/healthz") and not needs_auth("/readyz") and not needs_auth("/v1x")


def test_error_map() -> None:
    assert (from_exception(HistoryError("bad turn")).status, from_exception(HistoryError("bad turn")).code) == (
        400,
        "history",
    )
    assert from_exception(RetrievalNotFound("no")).status == 404
    llm = from_exception(FatalLLMError("refused", status=401))
    assert (llm.status, llm.type, llm.code) == (502, "upstream_llm_error", 401)
    assert from_exception(StoreError("down")).status == 503
    boom = from_exception(RuntimeError("secret internals"))
    assert boom.status == 500 and "secret" not in boom.message
    err = validation_error([{"loc": ("body", "history", 0, "role"), "msg": "bad role", "type": "literal_error"}])
    assert err.code == "history.0.role" and "bad role" in err.message
    assert validation_error([{"loc": ("query", "limit"), "msg": "x", "type": "greater_than_equal"}]).code == "limit"
    assert validation_error([{"loc": ("body", "zzz"), "msg": "x", "type": "extra_forbidden"}]).message.endswith(
        "unknown field"
    )


def test_server_json_parses_to_the_cli_json() -> None:
    """The server's encoder (orjson) against the CLI's (json.dumps, default=str) on what an envelope holds:
    a trace's rows (None kept only for contract keys), non-ASCII text, numpy scalars, dates, tuples."""
    import datetime as dt
    import json

    import numpy as np

    from driftgraph.query.trace import EntryCandidate, Trace, TraceItem
    from driftgraph.serve import encode

    trace = Trace(mode="local", question="Où est Dulce?")
    trace.add_entry(EntryCandidate(id="e1", title="DULCE — base", score=0.5, status="kept", similarity=0.61))
    trace.add_item(TraceItem(source="chunk", id="c1", tokens=12, status="dropped", reason="budget", depth=3))
    data = {
        "trace": trace.to_dict(),
        "scores": [np.float64(0.25), np.float32(0.5), np.int64(7), True, None],
        "pair": (1, "deux"),
        "at": dt.datetime(2026, 12, 1, 23, 0, tzinfo=dt.UTC),
    }
    expected = json.loads(json.dumps(data, ensure_ascii=False, default=str))
    assert json.loads(encode.dumps(data)) == expected
    assert expected["scores"][0] == 0.25 and expected["at"] == "2026-12-01 23:00:00+00:00"
    row = expected["trace"]["items"][0]
    assert row["reason"] == "budget" and row["depth"] == 3 and "via" not in row
    assert expected["trace"]["entry"][0]["reason"] is None, "a contract key stays when None"
    assert json.loads(encode.dumps({"x": float("nan")})) == {"x": None}, "NaN is not JSON: null"
    assert json.loads(encode.dumps({"huge": 2**70})) == {"huge": 2**70}, "beyond 64 bits: json's encoder"


def test_request_ids_a_client_sends_are_kept_only_when_safe() -> None:
    from driftgraph.serve.request_id import accepted

    assert accepted("req-1.a:B_2") == "req-1.a:B_2"
    for unsafe in (None, "", "a b", "x\nINFO: forged", "é", "a" * 129):
        fresh = accepted(unsafe)
        assert fresh != unsafe and len(fresh) == 32 and int(fresh, 16) >= 0
    assert accepted(None) != accepted(None)


def test_scoped_keys_come_from_a_file_and_never_show_their_secret(tmp_path):
    from driftgraph.errors import ConfigError
    from driftgraph.serve.auth import ALL_SCOPES, KEYS_FILE_ENV, load_keys, match_key

    path = tmp_path / "keys"
    lines = ["# comment", "reader-secret-1 read", "", "writer-secret-2 read, write  # ingest", "ops-secret-3 admin db2"]
    path.write_text("\n".join(lines) + "\n")
    got = load_keys({KEYS_FILE_ENV: str(path), "DRIFTGRAPH_API_KEY": "all-secret-0"})
    assert got is not None and [sorted(k.scopes) for k in got] == [
        sorted(ALL_SCOPES),
        ["read"],
        ["read", "write"],
        sorted(ALL_SCOPES),
    ]
    assert "secret" not in repr(got) and [k.database for k in got] == [None, None, None, "db2"]
    matched = match_key("Bearer writer-secret-2", got)
    assert matched is not None and matched.scopes == {"read", "write"}
    assert match_key("Bearer writer-secret", got) is None and match_key("Basic writer-secret-2", got) is None
    assert load_keys({}) is None
    path.write_text("reader-secret-1 read\nlonely-secret-9\n")
    with pytest.raises(ConfigError, match="line 2") as err:
        load_keys({KEYS_FILE_ENV: str(path)})
    assert "lonely-secret-9" not in str(err.value)
    path.write_text("reader-secret-1 read,root\n")
    with pytest.raises(ConfigError, match="line 1"):
        load_keys({KEYS_FILE_ENV: str(path)})
    with pytest.raises(ConfigError, match="cannot read"):
        load_keys({KEYS_FILE_ENV: str(tmp_path / "missing")})


def test_a_jobs_dir_that_cannot_be_made_is_one_clear_error_and_no_job_is_taken(tmp_path):
    from driftgraph.errors import ConfigError
    from driftgraph.serve.jobs import JobError, Jobs

    blocker = tmp_path / "jobs"
    blocker.write_text("a file where the folder should be")
    queue = Jobs(None, blocker / "inner")  # type: ignore[arg-type]  # no job runs: the engine is never reached
    with pytest.raises(ConfigError, match="serve.jobs_dir"):
        queue.start()
    with pytest.raises(JobError) as err:
        queue.submit("add", text="Some text.")
    assert err.value.status == 503 and not list(tmp_path.rglob("job.json"))


def test_finished_jobs_older_than_jobs_keep_days_are_removed_and_the_rest_kept(tmp_path):
    """``serve.jobs_keep_days``: the jobs folder does not grow for ever. A finished job (done, failed, cancelled)
    past the limit goes, folder and all; a recent one stays; 0 keeps them all."""
    import json
    from datetime import UTC, datetime, timedelta

    from driftgraph.config import Config
    from driftgraph.serve.jobs import JobError, Jobs

    def stored(job_id: str, state: str, days_ago: float) -> None:
        at = (datetime.now(UTC) - timedelta(days=days_ago)).isoformat(timespec="microseconds")
        folder = tmp_path / job_id
        folder.mkdir()
        finished = at if state in ("done", "failed", "cancelled") else None
        body = {"id": job_id, "action": "add", "state": state, "created_at": at, "finished_at": finished}
        (folder / "job.json").write_text(json.dumps(body))

    stored("old-done", "done", 40)
    stored("old-failed", "failed", 31)
    stored("new-done", "done", 2)
    stored("recent-cancelled", "cancelled", 0.5)
    assert Config().serve.jobs_keep_days == 30
    queue = Jobs(None, tmp_path, keep_days=30)  # type: ignore[arg-type]  # no job runs: the engine is never reached
    try:
        assert queue.start() == 0
        assert sorted(p.name for p in tmp_path.iterdir()) == ["new-done", "recent-cancelled"]
        with pytest.raises(JobError) as err:
            queue.get("old-done")
        assert err.value.status == 404
        assert queue.get("new-done").state == "done"
    finally:
        queue.stop(5)
    forever = Jobs(None, tmp_path, keep_days=0)  # type: ignore[arg-type]
    stored("ancient", "done", 4000)
    try:
        forever.start()
        assert (tmp_path / "ancient").is_dir(), "0 keeps every job"
    finally:
        forever.stop(5)
