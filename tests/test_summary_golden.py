"""The JSON that ``index``, ``import-graphrag``, ``export-graphrag``, ``adopt`` and ``doctor`` print with
``--json`` is a contract (scripts, the JVM tests and the bench read it): each run here is compared, key order
and formatting included, with a golden file under ``tests/data/golden/``. Only what differs between machines
or runs is masked (timings, temporary paths, the server's version and address) by key, leaving the key itself
in place; every other value must match exactly. ``DRIFTGRAPH_UPDATE_GOLDEN=1`` rewrites the files."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from driftgraph.api import Engine
from tests.conftest import make_config
from tests.support import graphrag_fixture, index_responder
from tests.support.cli import run_cli
from tests.support.foreign_graphs import EXAMPLES, llm_graph_builder, wipe

pytestmark = pytest.mark.e2e
GOLDEN = Path(__file__).resolve().parent / "data" / "golden"
# values that change from run to run or machine to machine: masked by their key, wherever they sit
VOLATILE = {"seconds", "phase_seconds", "embed_seconds", "items_per_second", "version", "edition", "uri"}


# the launcher's Browser address, or null when it runs without HTTP (a test server's choice, not the contract's)
OPTIONAL = {"browser"}


def _mask(value: Any, tmp: str, fake_url: str) -> Any:
    if isinstance(value, dict):
        return {
            k: "<str or null>" if k in OPTIONAL else _mask_leaf(v) if k in VOLATILE else _mask(v, tmp, fake_url)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_mask(v, tmp, fake_url) for v in value]
    if isinstance(value, str):
        return value.replace(tmp, "<tmp>").replace(fake_url, "<fake-llm>")
    return value


def _mask_leaf(value: Any) -> Any:
    """The shape stays (a dict keeps its keys, in order); a leaf becomes its type."""
    if isinstance(value, dict):
        return {k: _mask_leaf(v) for k, v in value.items()}
    return f"<{type(value).__name__}>"


def check(name: str, stdout: str, tmp: Path, fake_url: str = "\0") -> dict[str, Any]:
    """``stdout`` is exactly the CLI's JSON printing of a document that, masked, equals the golden file."""
    doc = json.loads(stdout)
    assert stdout == json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    text = json.dumps(_mask(doc, str(tmp), fake_url), indent=2, ensure_ascii=False) + "\n"
    path = GOLDEN / f"{name}.json"
    if os.environ.get("DRIFTGRAPH_UPDATE_GOLDEN"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    assert text == path.read_text(), f"{name}: the --json output changed"
    return dict(doc)


def _conf(tmp: Path, fake: Any, **extra: Any) -> None:
    conf = {"llm": {"model": "fake-model", "backoff_base_s": 0.0}, "embeddings": {"threads": 1}, **extra}
    (tmp / "driftgraph.yaml").write_text(yaml.safe_dump(conf))


def test_import_export_and_doctor_json(neo4j_cfg, neo4j_config, fake_llm, tmp_path):
    _conf(tmp_path, fake_llm)
    folder = graphrag_fixture.write(tmp_path / "graphrag")
    for name, extra in (("import_graphrag_no_embed", ["--reset", "--no-embed"]), ("import_graphrag", [])):
        res = run_cli(["import-graphrag", str(folder), *extra, "--json"], neo4j_config, fake_llm, tmp_path)
        assert res.returncode == 0, res.stderr
        check(name, res.stdout, tmp_path)
    res = run_cli(["export-graphrag", str(tmp_path / "out"), "--json"], neo4j_config, fake_llm, tmp_path)
    assert res.returncode == 0, res.stderr
    assert check("export_graphrag", res.stdout, tmp_path)["rows"]["entities"] > 0
    res = run_cli(["doctor", "--json"], neo4j_config, fake_llm, tmp_path)
    assert res.returncode == 0, res.stderr
    assert check("doctor", res.stdout, tmp_path, fake_llm.base_url)["schema"]["ok"] is True


def test_doctor_json_on_an_empty_and_an_unreachable_database(neo4j_cfg, neo4j_config, fake_llm, tmp_path):
    _conf(tmp_path, fake_llm)
    res = run_cli(["doctor", "--json"], neo4j_config, fake_llm, tmp_path)
    assert res.returncode == 0, res.stderr
    assert check("doctor_empty", res.stdout, tmp_path, fake_llm.base_url)["schema"]["state"] == "empty"
    (tmp_path / "driftgraph.yaml").write_text(yaml.safe_dump({"embeddings": {"threads": 1}}))
    gone = {**neo4j_config, "uri": "bolt://127.0.0.1:1"}
    res = run_cli(["doctor", "--json"], gone, fake_llm, tmp_path)
    assert res.returncode == 1
    assert check("doctor_unreachable", res.stdout, tmp_path, fake_llm.base_url)["neo4j"]["ok"] is False


def test_index_json(neo4j_cfg, neo4j_config, fake_llm, tmp_path):
    fake_llm.responder = index_responder.responder
    docs = tmp_path / "docs"
    docs.mkdir()
    for f in sorted(EXAMPLES.iterdir())[:2]:
        shutil.copy(f, docs / f.name)
    index = {"chunk_size": 200, "chunk_overlap": 10, "max_gleanings": 0, "concurrency": 1}
    _conf(tmp_path, fake_llm, index={**index, "cache_dir": str(tmp_path / "cache")})
    res = run_cli(["index", str(docs), "--json"], neo4j_config, fake_llm, tmp_path)
    assert res.returncode == 0, res.stderr
    first = check("index", res.stdout, tmp_path)
    assert first["entities"] > 0 and first["failures"]["count"] == 0
    (docs / sorted(EXAMPLES.iterdir())[0].name).unlink()  # a re-run: one document removed, the rest cached
    res = run_cli(["index", str(docs), "--json"], neo4j_config, fake_llm, tmp_path)
    assert res.returncode == 0, res.stderr
    assert check("index_rerun", res.stdout, tmp_path)["documents"]["removed"] > 0


def test_adopt_json(neo4j_cfg, neo4j_config, fake_llm, tmp_path):
    from tests.test_adopt import responder

    fake_llm.responder = responder
    cfg = make_config(neo4j_config, llm={"base_url": fake_llm.base_url, "model": "fake-model"})
    with Engine(cfg) as eng:
        wipe(eng.store)
        llm_graph_builder(eng.store, lambda texts: eng.embed(list(texts)), sorted(EXAMPLES.iterdir())[:1])
    _conf(tmp_path, fake_llm, index={"cache_dir": str(tmp_path / "cache"), "concurrency": 1})
    res = run_cli(["adopt", "--from", "llm-graph-builder", "--json"], neo4j_config, fake_llm, tmp_path)
    assert res.returncode == 0, res.stderr
    s = check("adopt", res.stdout, tmp_path)
    assert s["source"] == "llm-graph-builder" and s["reports"] == s["communities"] > 0


def test_index_batch_json(neo4j_cfg, neo4j_config, tmp_path):
    """``--batch`` adds its rounds under ``batch``, after the summary of the ordinary run."""
    from tests.support.fake_batches import FakeBatches

    docs = tmp_path / "docs"
    docs.mkdir()
    shutil.copy(sorted(EXAMPLES.iterdir())[1], docs)
    index = {"chunk_size": 200, "chunk_overlap": 10, "max_gleanings": 0, "concurrency": 1}
    poll = {"batch_poll_initial_s": 0.01, "batch_poll_max_s": 0.05}
    fake = FakeBatches(index_responder.responder).start()
    try:
        _conf(tmp_path, fake, index={**index, **poll, "cache_dir": str(tmp_path / "cache")})
        res = run_cli(["index", str(docs), "--batch", "--json"], neo4j_config, fake, tmp_path)
    finally:
        fake.stop()
    assert res.returncode == 0, res.stderr
    assert check("index_batch", res.stdout, tmp_path)["batch"]["requests"] > 0
