"""The Batch API, exactly once: a round is paid for once through crashes, timeouts, expiry and provider errors.

The round tests drive ``run_round`` with the real openai client against the fake Batch API
(tests/support/fake_batches.py); the index tests run ``index --batch`` against a real Neo4j, one of them
killing the CLI between a batch's create and its state write, one cutting Neo4j off mid-run.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml

from driftgraph.api import Engine
from driftgraph.errors import LLMUnavailable
from driftgraph.llm import batches as batches_mod
from driftgraph.llm.batches import run_round, write_state
from driftgraph.llm.cache import CallCache
from driftgraph.llm.chat import request_params
from tests.conftest import make_config
from tests.support.cli import run_cli
from tests.support.fake_batches import FakeBatches
from tests.support.index_responder import responder
from tests.test_index_batch import EXAMPLES, INDEX, POLL, _cfg, _snapshot

N = 6


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    shutil.copytree(EXAMPLES, docs)
    return docs


@pytest.fixture
def fake():
    server = FakeBatches().start()
    yield server
    server.stop()


def _round_cfg(fake: FakeBatches, cache: Path, index: dict | None = None, **llm: Any):
    llm = {"base_url": fake.base_url, "model": "fake-model", "backoff_base_s": 0.0, "max_retries": 3, **llm}
    return make_config(llm=llm, index={**POLL, "cache_dir": str(cache), **(index or {})})


def _requests(cfg, cache: CallCache) -> dict[str, dict[str, Any]]:
    out = {}
    for i in range(N):
        params = request_params(cfg.llm, [{"role": "user", "content": f"question {i}"}], 50, None)
        out[cache.key(params)] = params
    return out


def _answered(cache: CallCache, keys) -> int:
    return sum(cache.get(k) is not None for k in keys)


def test_a_crash_at_the_state_write_after_create_then_a_rerun_creates_nothing(fake, tmp_path, monkeypatch):
    cfg = _round_cfg(fake, tmp_path)
    cache = CallCache(tmp_path)
    reqs = _requests(cfg, cache)
    real_write = batches_mod.write_state

    def crash_once_the_batch_exists(path: Path, state: dict) -> None:
        if "batch_id" in state:
            monkeypatch.setattr(batches_mod, "write_state", real_write)
            raise KeyboardInterrupt  # the process dies between the create and the record of its id
        real_write(path, state)

    monkeypatch.setattr(batches_mod, "write_state", crash_once_the_batch_exists)
    with pytest.raises(KeyboardInterrupt):
        run_round(cfg, "extract", reqs, cache)
    assert fake.submissions == 1 and _answered(cache, reqs) == 0
    (record,) = (tmp_path / "batches").glob("extract-*.json")
    assert json.loads(record.read_text())["status"] == "submitting", "only the intent was recorded"

    assert run_round(cfg, "extract", reqs, cache) == {}
    assert fake.submissions == 1 and len(fake.files) == 2, "found by its tag: no second upload or create"
    assert _answered(cache, reqs) == N
    assert json.loads(record.read_text())["batch_id"] == "batch-1"


def test_a_create_the_client_timed_out_on_is_found_not_sent_again(fake, tmp_path):
    cfg = _round_cfg(fake, tmp_path, timeout_s=0.5)
    cache = CallCache(tmp_path)
    reqs = _requests(cfg, cache)
    fake.create_delay_s = 2.0  # the server accepts the create, the client stops waiting at 0.5 s
    assert run_round(cfg, "extract", reqs, cache) == {}
    assert fake.submissions == 1 and fake.lines_submitted() == N
    assert _answered(cache, reqs) == N


def test_an_expired_batch_keeps_its_answers_and_resubmits_only_the_rest(fake, tmp_path):
    cfg = _round_cfg(fake, tmp_path)
    cache = CallCache(tmp_path)
    reqs = _requests(cfg, cache)
    fake.expire_partial = 1
    assert run_round(cfg, "extract", reqs, cache) == {}
    first, second = fake.created
    assert fake.batches[first["id"]]["status"] == "expired"
    kept = set(first["custom_ids"][0::2])
    assert set(first["custom_ids"]) == set(reqs) and set(second["custom_ids"]) == set(reqs) - kept
    assert fake.lines_answered() == N and _answered(cache, reqs) == N, "every request answered exactly once"


def test_an_expiry_past_the_deadline_stops_and_the_rerun_submits_only_the_rest(fake, tmp_path):
    cfg = _round_cfg(fake, tmp_path, {"batch_timeout_s": 1e-6})  # no time left for a second batch in this run
    cache = CallCache(tmp_path)
    reqs = _requests(cfg, cache)
    fake.expire_partial, fake.polls_before_done = 1, 0
    with pytest.raises(LLMUnavailable, match=f"ended expired with {N // 2} of {N} .* submit the other {N // 2}"):
        run_round(cfg, "extract", reqs, cache)
    assert _answered(cache, reqs) == N // 2
    assert run_round(cfg, "extract", reqs, cache) == {}
    assert [len(c["custom_ids"]) for c in fake.created] == [N, N // 2]
    assert _answered(cache, reqs) == N


def test_poll_download_list_and_create_errors_are_retried(fake, tmp_path):
    cfg = _round_cfg(fake, tmp_path)
    cache = CallCache(tmp_path)
    reqs = _requests(cfg, cache)
    fake.polls_before_done = 2
    for kind, times in (("create", 1), ("list", 1), ("poll", 2), ("download", 1)):
        fake.fail_next(kind, times)
    assert run_round(cfg, "extract", reqs, cache) == {}
    assert fake.faults_served == {"create": 1, "list": 1, "poll": 2, "download": 1}
    assert fake.submissions == 1 and _answered(cache, reqs) == N


def test_polling_that_fails_past_the_retries_stops_and_the_rerun_resumes(fake, tmp_path):
    cfg = _round_cfg(fake, tmp_path, max_retries=1)
    cache = CallCache(tmp_path)
    reqs = _requests(cfg, cache)
    fake.fail_next("poll", 2)
    with pytest.raises(LLMUnavailable, match="503"):
        run_round(cfg, "extract", reqs, cache)
    assert run_round(cfg, "extract", reqs, cache) == {}
    assert fake.submissions == 1 and _answered(cache, reqs) == N


def test_a_lost_cache_reads_the_completed_batch_again_while_its_output_exists(fake, tmp_path):
    cfg = _round_cfg(fake, tmp_path / "cache")
    reqs = _requests(cfg, CallCache(tmp_path / "cache"))
    run_round(cfg, "extract", reqs, CallCache(tmp_path / "cache"))
    assert fake.submissions == 1

    cfg2 = _round_cfg(fake, tmp_path / "elsewhere")  # a new checkout: no record, no answers
    cache2 = CallCache(tmp_path / "elsewhere")
    assert run_round(cfg2, "extract", reqs, cache2) == {}
    assert fake.submissions == 1 and _answered(cache2, reqs) == N, "the completed batch's output, read again"

    del fake.files[fake.batches["batch-1"]["output_file_id"]]  # the provider deleted the output
    cfg3 = _round_cfg(fake, tmp_path / "third")
    cache3 = CallCache(tmp_path / "third")
    assert run_round(cfg3, "extract", reqs, cache3) == {}
    assert fake.submissions == 2 and _answered(cache3, reqs) == N


def test_answers_read_once_are_asked_anew_not_read_again_from_the_same_batch(fake, tmp_path):
    """An answer the pipeline evicted as unusable must be asked again, as a direct run would."""
    cfg = _round_cfg(fake, tmp_path)
    cache = CallCache(tmp_path)
    reqs = _requests(cfg, cache)
    run_round(cfg, "extract", reqs, cache)
    for key in reqs:
        cache.delete(key)
    assert run_round(cfg, "extract", reqs, cache) == {}
    assert fake.submissions == 2 and _answered(cache, reqs) == N


def test_the_state_write_is_atomic(tmp_path):
    path = tmp_path / "batches" / "extract-r.json"
    write_state(path, {"batch_id": "batch-1"})
    with pytest.raises(TypeError):
        write_state(path, {"batch_id": "batch-2", "broken": object()})  # fails half-way through the JSON
    assert json.loads(path.read_text()) == {"batch_id": "batch-1"}
    assert [p.name for p in path.parent.iterdir()] == [path.name], "no temp file left behind"


def _cli_env(neo4j: dict, fake: FakeBatches) -> dict[str, str]:
    return {**os.environ, "NEO4J_URI": neo4j["uri"], "NEO4J_PASSWORD": neo4j["password"],
            "OPENAI_BASE_URL": fake.base_url, "OPENAI_API_KEY": "test"}  # fmt: skip


def _conf(tmp_path: Path, cache: Path) -> Path:
    conf = tmp_path / "driftgraph.yaml"
    llm = {"model": "fake-model", "backoff_base_s": 0.0}
    conf.write_text(yaml.safe_dump({"llm": llm, "index": {**INDEX, **POLL, "cache_dir": str(cache)},
                                    "embeddings": {"threads": 1}}))  # fmt: skip
    return conf


@pytest.mark.e2e
def test_a_crash_between_create_and_the_state_write_submits_nothing_twice(
    neo4j_cfg, neo4j_config, fake_llm, corpus, tmp_path
):
    """The CLI is killed while the provider accepts its second batch (before the id reaches the state file);
    the re-run finds that batch by its tag: every round created once, every request sent once, and the graph
    is the direct run's."""
    fake_llm.responder = responder
    with Engine(_cfg(neo4j_config, fake_llm.base_url, tmp_path / "direct")) as eng:
        direct = eng.index(corpus)
        direct_snapshot = _snapshot(eng.store)
    fake = FakeBatches(responder).start()
    try:
        cache = tmp_path / "cache"
        args = [sys.executable, "-m", "driftgraph", "index", str(corpus), "--batch", "--reset"]
        args += ["--config", str(_conf(tmp_path, cache))]
        proc = subprocess.Popen(args, cwd=tmp_path, env=_cli_env(neo4j_config, fake), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)  # fmt: skip

        def kill_at_the_second_create(batch: dict) -> None:
            if batch["id"] == "batch-2":
                proc.send_signal(signal.SIGKILL)
                proc.wait(60)  # dead before the create's response is sent

        fake.on_create = kill_at_the_second_create
        proc.communicate(timeout=300)
        assert proc.returncode == -signal.SIGKILL and fake.submissions == 2
        records = [json.loads(p.read_text()) for p in sorted((cache / "batches").glob("*.json"))]
        assert sorted(r.get("status") for r in records) == ["completed", "submitting"], "killed before the id"

        with Engine(_cfg(neo4j_config, fake.base_url, cache)) as eng:
            run = eng.index(corpus, reset=True, batch=True)
            batch_snapshot = _snapshot(eng.store)
    finally:
        fake.stop()
    assert set(fake.creates_per_round().values()) == {1}, "no round created twice"
    assert fake.lines_submitted() == fake.lines_answered() == direct.llm_calls, "no request sent twice"
    assert fake.direct_calls == 0 and run.failures.count == 0
    assert batch_snapshot == direct_snapshot


class _Relay:
    """A TCP relay to Neo4j that can be cut: the database goes away for one run, not for the other tests."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.2)
        self.port = self.listener.getsockname()[1]
        self.sockets: list[socket.socket] = []
        self.down = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.down.is_set():
            try:
                client, _ = self.listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            self.sockets += [client, upstream]
            for src, dst in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(src, dst), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)

    def cut(self) -> None:
        self.down.set()
        self.listener.close()  # new connections are refused
        for s in self.sockets:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            s.close()


@pytest.mark.e2e
def test_a_neo4j_outage_stops_index_batch_before_the_report_round(neo4j_cfg, neo4j_config, corpus, tmp_path):
    """Neo4j goes away while the summaries are batched: the partition lookup's StoreError ends the run (exit 1,
    one line naming Neo4j) instead of reading as "no previous partition" and paying for every report."""
    host, port = neo4j_config["uri"].split("://", 1)[1].rsplit(":", 1)
    relay = _Relay((host, int(port)))
    fake = FakeBatches(responder).start()
    fake.on_create = lambda batch: relay.cut() if batch["metadata"]["driftgraph_stage"] == "summarize" else None
    try:
        neo4j = {**neo4j_config, "uri": f"bolt://127.0.0.1:{relay.port}"}
        res = run_cli(["index", str(corpus), "--batch", "--config", str(_conf(tmp_path, tmp_path / "cache"))],
                      neo4j, fake, tmp_path)  # fmt: skip
    finally:
        relay.cut()
        fake.stop()
    stages = [c["metadata"]["driftgraph_stage"] for c in fake.created]
    assert "summarize" in stages and "report" not in stages, stages
    assert res.returncode == 1 and res.stdout == ""
    errors = [line for line in res.stderr.splitlines() if line.startswith("error:")]  # not the progress bars
    assert len(errors) == 1 and "Neo4j is not reachable" in errors[0], res.stderr
    assert errors[0] == res.stderr.strip().splitlines()[-1] and "Traceback" not in res.stderr
