"""`index --batch`: every chat call through the Batch API (fake), in stage rounds; same graph as a direct run."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from driftgraph.api import Engine
from driftgraph.errors import LLMUnavailable
from tests.conftest import make_config
from tests.support.fake_batches import FakeBatches
from tests.support.index_responder import responder

pytestmark = pytest.mark.e2e
EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "docs"
INDEX = {"chunk_size": 80, "chunk_overlap": 10, "claims": True, "description_max_tokens": 60, "concurrency": 3}
POLL = {"batch_poll_initial_s": 0.01, "batch_poll_max_s": 0.05}


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    shutil.copytree(EXAMPLES, docs)
    return docs


@pytest.fixture
def batches():
    fake = FakeBatches(responder).start()
    yield fake
    fake.stop()


def _cfg(neo4j_config, base_url, cache: Path, **index):
    return make_config(
        neo4j_config,
        llm={"base_url": base_url, "model": "fake-model", "backoff_base_s": 0.0},
        index={**INDEX, **POLL, "cache_dir": str(cache), **index},
    )


def _snapshot(store) -> dict:
    snap = store.read("tests/index_snapshot")[0]
    return {k: sorted(map(str, v)) for k, v in snap.items()}


def test_batch_run_builds_the_direct_runs_graph_with_no_direct_call(
    neo4j_cfg, neo4j_config, fake_llm, batches, corpus, tmp_path
):
    fake_llm.responder = responder
    with Engine(_cfg(neo4j_config, fake_llm.base_url, tmp_path / "direct")) as eng:
        direct = eng.index(corpus)
        direct_snapshot = _snapshot(eng.store)
    assert direct.failures.count == 0 and direct.llm_calls > 0

    with Engine(_cfg(neo4j_config, batches.base_url, tmp_path / "batch")) as eng:
        run = eng.index(corpus, reset=True, batch=True)
        batch_snapshot = _snapshot(eng.store)
    assert batches.direct_calls == 0 and run.llm_calls == 0, "batch mode makes no direct chat call"
    b = run.batch
    assert b is not None
    assert b.requests == direct.llm_calls == batches.lines_answered() and b.failed == 0
    per_phase: dict[str, int] = {}
    for r in b.rounds:
        for phase, n in r.phases.items():
            per_phase[phase] = per_phase.get(phase, 0) + n
    assert per_phase == {p: c["llm_calls"] for p, c in direct.llm.items() if p != "total" and c["llm_calls"]}
    stages = [r.stage for r in b.rounds]
    assert stages == sorted(stages, key=["extract", "summarize", "report"].index), "rounds follow the stages"
    assert stages.count("extract") >= 2, "gleaning follows its extraction in a later round"
    assert batch_snapshot == direct_snapshot
    for key in ("chunks", "entities", "relationships", "claims", "communities", "reports"):
        assert getattr(run, key) == getattr(direct, key), key


def test_a_crashed_run_resumes_polling_instead_of_resubmitting(neo4j_cfg, neo4j_config, batches, corpus, tmp_path):
    batches.polls_before_done = 10**6  # the provider is slow: the first run gives up polling
    cfg = _cfg(neo4j_config, batches.base_url, tmp_path / "cache", batch_timeout_s=0.3)
    with Engine(cfg) as eng, pytest.raises(LLMUnavailable, match="resumes polling"):
        eng.index(corpus, batch=True)
    assert batches.submissions == 1
    assert list((tmp_path / "cache" / "batches").glob("extract-*.json")), "the batch id is kept under the cache"
    batches.polls_before_done = 0
    with Engine(cfg) as eng:
        run = eng.index(corpus, batch=True)
    assert run.failures.count == 0
    assert batches.submissions == len(run.batch.rounds), "the pending round was polled, not submitted again"


def test_failed_lines_fail_their_items_like_direct_failures(neo4j_cfg, neo4j_config, batches, corpus, tmp_path):
    def tidal_extraction(body):
        first = body["messages"][0]["content"]
        fmt = (body.get("response_format") or {}).get("json_schema", {}).get("name")
        return fmt == "extract_graph" and len(body["messages"]) == 1 and "Lantern Festival" in first

    batches.fail_line = tidal_extraction
    with Engine(_cfg(neo4j_config, batches.base_url, tmp_path / "cache")) as eng:
        run = eng.index(corpus, batch=True)
    failed = run.failures.chunks
    assert failed and run.batch.failed == len(failed)
    assert all("injected line failure" in " ".join(f.errors) for f in failed)
    assert run.chunks > len(failed) and run.entities > 0, "the rest of the run goes on"


def test_refuses_an_imported_or_adopted_database_before_submitting_anything(
    neo4j_cfg, neo4j_config, batches, corpus, tmp_path
):
    """`index --batch` over what `index` would refuse: one line, exit 1, and no file or batch at the provider."""
    from driftgraph.store.schema import mark_filled_by
    from tests.support.cli import run_cli

    sample = Path(__file__).resolve().parent.parent / "examples" / "sample-index"
    conf = tmp_path / "driftgraph.yaml"
    conf.write_text(
        yaml.safe_dump({"index": {**POLL, "cache_dir": str(tmp_path / "cache")}, "embeddings": {"threads": 1}})
    )
    with Engine(_cfg(neo4j_config, batches.base_url, tmp_path / "cache")) as eng:
        eng.import_graphrag(sample)
    res = run_cli(["index", str(corpus), "--batch", "--config", str(conf)], neo4j_config, batches, tmp_path)
    assert res.returncode == 1 and res.stdout == ""
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and "imported GraphRAG index" in lines[0] and "--reset" in lines[0], res.stderr
    assert batches.files == {} and batches.batches == {} and batches.submissions == 0
    assert not (tmp_path / "cache" / "batches").exists()

    with Engine(_cfg(neo4j_config, batches.base_url, tmp_path / "cache")) as eng:
        mark_filled_by(eng.store, "adopt:llm-graph-builder")  # what `driftgraph adopt` leaves on the graph
    for extra in ([], ["--reset"]):
        res = run_cli(["index", str(corpus), "--batch", *extra, "--config", str(conf)], neo4j_config, batches, tmp_path)
        lines = res.stderr.strip().splitlines()
        assert res.returncode == 1 and len(lines) == 1 and "llm-graph-builder built and driftgraph adopted" in lines[0]
    assert batches.files == {} and batches.batches == {} and batches.submissions == 0
