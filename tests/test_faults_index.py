"""Fault injection for ``index`` and ``import-graphrag``: a refused or dead endpoint stops the run with one line;
a transient fault is retried to completion; chunks that keep failing finish with exit code 3 (listed, never
cached, retried by the next run) unless ``--allow-failures``; the importer makes no chat call at all."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from driftgraph.api import Engine
from tests.conftest import SHARED_DATA, make_config
from tests.support.cli import run_cli
from tests.support.faults import EXAMPLES, INDEX, INDEX_FAULTS, Fault, llm_section
from tests.support.index_responder import data_of, responder

pytestmark = pytest.mark.e2e


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    shutil.copytree(EXAMPLES, docs)
    return docs


def _cfg(neo4j: dict, fake: Any, tmp_path: Path, fault: Fault | None = None) -> Any:
    llm = {**llm_section(fake, fault), "model": "fake-model"}
    return make_config(neo4j, llm=llm, index={**INDEX, "cache_dir": str(tmp_path / "cache")})


@pytest.mark.parametrize("fault_name", list(INDEX_FAULTS))
def test_index_stops_with_one_line_when_the_endpoint_refuses_or_is_down(
    neo4j_cfg, neo4j_config, fake_llm, corpus, tmp_path, fault_name
):
    fault = INDEX_FAULTS[fault_name]
    fake_llm.responder = responder
    fault.inject(fake_llm)
    with Engine(_cfg(neo4j_config, fake_llm, tmp_path, fault)) as eng, pytest.raises(fault.error) as info:
        eng.index(corpus)
    message = str(info.value)
    assert "\n" not in message and fault.message in message and fault.base_url(fake_llm) in message


def test_index_retries_transient_faults_to_completion(neo4j_cfg, neo4j_config, fake_llm, corpus, tmp_path):
    fake_llm.responder = responder
    fake_llm.set_fault("every_nth_429:3")
    cfg = _cfg(neo4j_config, fake_llm, tmp_path)
    # one call at a time: with two in flight a call and its retry can both land on a 3rd request and fail
    cfg.index.concurrency = 1
    with Engine(cfg) as eng:
        summary = eng.index(corpus)
    assert summary.failures.count == 0 and summary.reports > 0
    total = summary.llm["total"]
    assert total["retries"] >= 1 and total["http_attempts"] == total["llm_calls"] + total["retries"]


def test_index_exit_code_3_with_failures_then_a_rerun_completes(neo4j_cfg, neo4j_config, fake_llm, corpus, tmp_path):
    def garbled_for_one_document(request: dict) -> str:
        """Extraction of the chunks about the lantern festival (and their repair) never gets JSON."""
        fmt = (request.get("response_format") or {}).get("json_schema") or {}
        if fmt.get("name") == "extract_graph" and "Lantern Festival" in data_of(request):
            return "this is not JSON at all"
        return responder(request)

    fake_llm.responder = garbled_for_one_document
    (tmp_path / "driftgraph.yaml").write_text(
        json.dumps({"index": {**INDEX, "cache_dir": str(tmp_path / "cache")}, "llm": {"backoff_base_s": 0.0}})
    )
    first = run_cli(["index", str(corpus), "--json"], neo4j_config, fake_llm, tmp_path)
    assert first.returncode == 3, first.stderr
    summary = json.loads(first.stdout)
    failed = summary["failures"]["chunks"]
    assert failed and all(f["document"] for f in failed)
    assert any("lantern" in f["document"].lower() for f in failed)
    assert "finished with" in first.stderr and "exit 3" in first.stderr
    allowed = run_cli(["index", str(corpus), "--allow-failures"], neo4j_config, fake_llm, tmp_path)
    assert allowed.returncode == 0, allowed.stderr
    fake_llm.responder = responder  # healed: the failed chunks were not cached, so the next run asks again
    before = len(fake_llm.chat_requests())
    healed = run_cli(["index", str(corpus), "--json"], neo4j_config, fake_llm, tmp_path)
    assert healed.returncode == 0, healed.stderr
    assert json.loads(healed.stdout)["failures"]["count"] == 0
    assert len(fake_llm.chat_requests()) > before


def test_import_graphrag_makes_no_chat_call_under_any_fault(neo4j_cfg, neo4j_config, fake_llm, tmp_path):
    path = SHARED_DATA / "operation-dulce"
    if not path.is_dir():
        pytest.skip("shared data missing")
    fake_llm.set_fault("status:401")
    cfg = make_config(neo4j_config, llm={"base_url": fake_llm.base_url, "api_key": "t"})
    with Engine(cfg) as eng:
        summary = eng.import_graphrag(path, reset=True, embed=False)
    assert fake_llm.chat_requests() == [] and summary
