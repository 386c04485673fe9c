"""A real small model (Qwen2.5-Coder-0.5B, llama-cpp-python's server) through the whole main job: index the
sample documents, then the demo question in every mode (issue 37's CI smoke run).

What a 0.5B model writes is not what is asserted; what driftgraph does with it is: every structured reply is
read (repairs allowed, and counted), every citation in an answer names an item that was shown, and every
mode ends with an answer that passes the answer check or with an honest stop reason and no answer. The
server and weights come from ``python -m bench real-model --prepare`` (scripts/test.sh runs it); without
them the test skips on a dev machine and FAILS under CI (env CI set).
"""

from __future__ import annotations

import json
import os
import shutil

import pytest

from bench import paths
from bench.realmodel import run, server, weights
from driftgraph.api import Engine
from driftgraph.query.answer_check import check_answer
from tests.conftest import make_config

pytestmark = [pytest.mark.e2e, pytest.mark.realmodel]
MODEL = weights.MODELS["0.5b"]
CACHE = paths.CACHE / "realmodel"
CTX = 8192


@pytest.fixture(scope="module")
def real_server():
    python, model = CACHE / "venv" / "bin" / "python", CACHE / MODEL.file
    if not (python.exists() and model.exists()):
        message = "no real-model server: run `python -m bench real-model --prepare` (scripts/test.sh does)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    with server.running(python, model, threads=os.cpu_count() or 2, ctx=CTX, log_dir=CACHE / "logs") as srv:
        yield srv


def test_a_real_model_indexes_the_sample_and_every_mode_ends_honestly(neo4j_config, real_server, tmp_path):
    # CI's time: the one document the demo question is about, and a DRIFT run of one short epoch (a 0.5B model
    # writes ~12 tokens/s on 2 cores; the whole sample and default DRIFT are `python -m bench real-model`)
    docs = tmp_path / "docs"
    docs.mkdir()
    shutil.copy(run.DOCS / "winter-storm-2019.md", docs)
    extra = run.config_extra(real_server.base_url, real_server.model, CTX, tmp_path / "cache")
    extra["drift"] = {"max_llm_calls": 8, "follow_ups_per_epoch": 2, "max_depth": 1}
    cfg = make_config(neo4j_config, **extra)
    questions = json.loads(run.QUESTIONS.read_text(encoding="utf-8"))["questions"][:1]  # the README's demo question
    with Engine(cfg) as eng:
        result = run.run(eng, questions, list(run.MODES), docs, log=print)
    (tmp_path / "real_model.json").write_text(json.dumps(result, indent=1), encoding="utf-8")
    print(json.dumps({k: result[k] for k in ("estimate", "index")}, indent=1))

    index = result["index"]
    assert index["graph"]["entities"] > 0 and index["graph"]["reports"] > 0, index
    unread = {p: c["unparsed"] for p, c in index["phases"].items() if c["unparsed"]}
    assert not unread, f"indexing replies never read: {unread}"
    for row in result["answers"]:
        where = f"{row['mode']}: {row.get('stop_reason')} {row.get('error') or ''}"
        if row.get("answer") is not None:
            assert check_answer(row["answer"]) is None, f"{where}: a failed answer returned as one: {row['answer']!r}"
            assert row["citations_valid"] is not False, f"{where}: cites what was not shown: {row['citations']}"
            unread = {p: c["unparsed"] for p, c in row["phases"].items() if c["unparsed"]}
            assert not unread, f"{where}: replies never read, yet an answer: {unread}"
        else:
            assert row["stop_reason"] not in (None, "answered"), f"{where}: no answer and no honest stop reason"
            assert row.get("error"), f"{where}: a failure must say what failed"
