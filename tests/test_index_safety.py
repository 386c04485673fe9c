"""A failed `index` run deletes nothing (issue 36): a chunk whose extraction fails keeps what it contributed
before, `index.cache_dir` does not go cold when the run starts from another folder, and `--reset` deletes the
old index only once the new run's extraction succeeded, keeping stored retrievals unless `--reset-traces`.
Real Neo4j, the real openai client against the fake server, the CLI run as a user would."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from driftgraph import LocalQuery
from driftgraph.api import Engine
from driftgraph.config import load_config
from driftgraph.store.db import Store
from tests.conftest import make_config
from tests.support.cli import run_cli
from tests.support.faults import EXAMPLES, INDEX
from tests.support.index_responder import data_of, responder

pytestmark = pytest.mark.e2e

INDEX_CLAIMS = {**INDEX, "claims": True}
LLM = {"model": "fake-model", "max_retries": 1, "backoff_base_s": 0.0}


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    shutil.copytree(EXAMPLES, docs)
    return docs


def _write_config(folder: Path, cache_dir: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "driftgraph.yaml"
    path.write_text(json.dumps({"index": {**INDEX_CLAIMS, "cache_dir": cache_dir}, "llm": LLM}))
    return path


def _graph(neo4j: dict) -> dict[str, Any]:
    """Counts, and the entity, relationship and claim ids with each chunk's mentions."""
    with Store(make_config(neo4j).neo4j) as store:
        counts = {k: int(v) for k, v in store.read("admin/counts")[0].items()}
        snap = store.read("tests/index_snapshot")[0]
        kept = store.read("tests/chunk_contributions")[0]
    return {
        "counts": counts,
        "entities": sorted(snap["entities"]),
        "relationships": sorted(snap["relationships"]),
        "claims": sorted(kept["claims"]),
        "mentions": sorted(kept["mentions"]),
    }


def _lantern_garbled(request: dict) -> str:
    """The graph extraction of chunks about the lantern festival (and its repair) never gets JSON."""
    fmt = (request.get("response_format") or {}).get("json_schema") or {}
    if fmt.get("name") == "extract_graph" and "Lantern Festival" in data_of(request):
        return "this is not JSON at all"
    return responder(request)


def _all_garbled(request: dict) -> str:
    fmt = (request.get("response_format") or {}).get("json_schema") or {}
    if fmt.get("name") == "extract_graph":
        return "this is not JSON at all"
    return responder(request)


def test_a_chunk_failing_on_a_cold_cache_keeps_what_it_contributed(neo4j_cfg, neo4j_config, fake_llm, corpus, tmp_path):
    fake_llm.responder = responder
    first = run_cli(["index", str(corpus)], neo4j_config, fake_llm, _write_config(tmp_path / "a", "cache").parent)
    assert first.returncode == 0, first.stderr
    before = _graph(neo4j_config)
    lantern = [m for m in before["mentions"] if "LANTERN FESTIVAL" in m]
    assert lantern and before["claims"], "the first run must have given the lantern chunks entities and claims"

    # a cold cache (another cache_dir) and the lantern chunks' extraction failing: nothing may go
    fake_llm.responder = _lantern_garbled
    cold = _write_config(tmp_path / "b", "cache").parent
    again = run_cli(["index", str(corpus), "--json"], neo4j_config, fake_llm, cold)
    assert again.returncode == 3, again.stderr
    summary = json.loads(again.stdout)
    failed = summary["failures"]["chunks"]
    assert failed and all("lantern" in f["document"].lower() for f in failed)
    assert summary["redone"]["deleted"]["entities"] == 0 and summary["redone"]["deleted"]["mentions"] == 0
    after = _graph(neo4j_config)
    assert after == before

    # healed: the failed chunks were not cached, so the next run extracts them again and nothing is lost
    fake_llm.responder = responder
    healed = run_cli(["index", str(corpus), "--json"], neo4j_config, fake_llm, cold)
    assert healed.returncode == 0, healed.stderr
    assert json.loads(healed.stdout)["redone"]["chunks_extracted"] == len(failed)
    assert _graph(neo4j_config) == before


def test_relative_cache_dir_is_next_to_the_config_file(neo4j_cfg, neo4j_config, fake_llm, corpus, tmp_path):
    conf = _write_config(tmp_path / "project", ".driftgraph/cache")
    assert load_config(conf).index.cache_dir == str((tmp_path / "project" / ".driftgraph" / "cache").resolve())
    fake_llm.responder = responder
    first = run_cli(["index", str(corpus)], neo4j_config, fake_llm, conf.parent)
    assert first.returncode == 0, first.stderr
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    sent = len(fake_llm.chat_requests())
    again = run_cli(["index", str(corpus), "--json", "--config", str(conf)], neo4j_config, fake_llm, elsewhere)
    assert again.returncode == 0, again.stderr
    assert len(fake_llm.chat_requests()) == sent  # every call answered from the same cache
    assert json.loads(again.stdout)["cache_hits"] > 0
    assert not (elsewhere / ".driftgraph").exists()


def _with_a_retrieval(neo4j: dict, fake: Any, corpus: Path, tmp_path: Path) -> dict[str, Any]:
    fake.responder = responder
    cache = str(tmp_path / "cache")
    cfg = make_config(
        neo4j, llm={**LLM, "base_url": fake.base_url, "api_key": "t"}, index={**INDEX, "cache_dir": cache}
    )
    with Engine(cfg) as eng:
        eng.index(corpus)
        eng.query(LocalQuery(question="Who runs Corran Foundry?", context_only=True, budget=2000))
    graph = _graph(neo4j)
    assert graph["counts"]["retrievals"] == 1 and graph["counts"]["entities"] > 0
    return graph


def test_reset_against_a_refusing_endpoint_keeps_the_database(neo4j_cfg, neo4j_config, fake_llm, corpus, tmp_path):
    before = _with_a_retrieval(neo4j_config, fake_llm, corpus, tmp_path)
    fake_llm.set_fault("status:401")
    cwd = _write_config(tmp_path / "cold", "cache").parent  # a cold cache: the extraction must call
    run = run_cli(["index", str(corpus), "--reset"], neo4j_config, fake_llm, cwd)
    assert run.returncode == 1, run.stderr
    assert "answered 401" in run.stderr
    assert _graph(neo4j_config) == before


def test_reset_when_no_chunk_could_be_extracted_keeps_the_database(neo4j_cfg, neo4j_config, fake_llm, corpus, tmp_path):
    before = _with_a_retrieval(neo4j_config, fake_llm, corpus, tmp_path)
    fake_llm.responder = _all_garbled
    cwd = _write_config(tmp_path / "cold", "cache").parent
    run = run_cli(["index", str(corpus), "--reset"], neo4j_config, fake_llm, cwd)
    assert run.returncode == 1, run.stderr
    assert "left as it was" in run.stderr
    assert _graph(neo4j_config) == before


def test_reset_keeps_stored_retrievals_unless_asked(neo4j_cfg, neo4j_config, fake_llm, corpus, tmp_path):
    before = _with_a_retrieval(neo4j_config, fake_llm, corpus, tmp_path)
    cwd = _write_config(tmp_path / "cfg", str(tmp_path / "cache")).parent
    kept = run_cli(["index", str(corpus), "--reset"], neo4j_config, fake_llm, cwd)
    assert kept.returncode == 0, kept.stderr
    after = _graph(neo4j_config)
    assert after["counts"]["retrievals"] == 1 and after["counts"]["entities"] == before["counts"]["entities"]
    wiped = run_cli(["index", str(corpus), "--reset", "--reset-traces"], neo4j_config, fake_llm, cwd)
    assert wiped.returncode == 0, wiped.stderr
    assert _graph(neo4j_config)["counts"]["retrievals"] == 0
    refused = run_cli(["index", str(corpus), "--reset-traces"], neo4j_config, fake_llm, cwd)
    assert refused.returncode != 0 and "--reset-traces" in refused.stderr


def test_reset_index_deletes_what_admin_reset_does_except_the_traces():
    """`index --reset` (ingest/reset_index) spells the same labels as admin/reset, less the stored retrievals,
    in both of its statements."""
    root = Path(__file__).resolve().parent.parent / "cypher"

    def labels(name: str) -> tuple[set[str], set[str]]:
        rels, nodes = [s for s in (root / f"{name}.cypher").read_text(encoding="utf-8").split(";") if "MATCH" in s]
        return set(re.findall(r"'([A-Za-z_]+)'", rels)), set(re.findall(r"\bn:([A-Za-z_]+)", nodes))

    full_rels, full_nodes = labels("admin/reset")
    rels, nodes = labels("ingest/reset_index")
    assert rels == nodes == full_rels - {"Retrieval", "DriftStep"} == full_nodes - {"Retrieval", "DriftStep"}
