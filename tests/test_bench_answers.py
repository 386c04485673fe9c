"""`python -m bench answers`: each mode answers through an OpenAI-compatible endpoint (the fake server, the real
openai client) over an imported index in a real Neo4j, and the answers the fake gives, known right, known
wrong and half right, get exactly their exact-match and F1 scores; gold-in-context is measured offline too."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bench.run.dg import answer_metrics as am
from tests.support.drift_fakes import tree_responder
from tests.support.fake_openai import FakeOpenAI
from tests.support.global_fake import responder as global_responder
from tests.support.global_fake import schema_name

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "examples" / "sample-index"
# question -> (gold, what the fake model answers): right, wrong, half right, right but not in the corpus
QUESTIONS = {
    "Who started the Kelmouth Lantern Festival?": ("Delia Fenn", "Delia Fenn."),
    "Which foundry casts the lantern of the Kelmouth Lantern Festival?": ("Corran Foundry", "Marrow Bay Shipyard"),
    "Who lights the lantern of the Kelmouth Lantern Festival?": (
        "Ines Halloran",
        "Ines Halloran of the Tidewater Grid Cooperative",
    ),
    "In which year did the Kelmouth Lantern Festival first use a brass lantern?": ("1987", "1987"),
}
EXPECTED = {"em": [1.0, 0.0, 0.0, 1.0], "f1": [1.0, 0.0, 0.5, 1.0]}


def test_normalisation_and_scores():
    assert am.normalize("The  Anglican Communion!") == "anglican communion"
    assert am.exact_match("the Anglican communion.", ["Anglican Communion"]) == 1.0
    assert am.exact_match("Anglican", ["Anglican Communion"]) == 0.0
    assert am.token_f1("Anglican", ["Anglican Communion"]) == pytest.approx(2 / 3)
    assert am.token_f1("Norway", ["Sweden", "Kingdom of Norway"]) == pytest.approx(0.5), "best of the golds"
    assert am.token_f1("", ["Norway"]) == 0.0
    assert am.in_context(["Ines Halloran"], "where Ines\nHalloran lights it") == 1.0
    assert am.in_context(["Ines Hall"], "where Ines Halloran lights it") == 0.0, "whole words only"


def _model(request: dict[str, Any]) -> str:
    name = schema_name(request)
    if name in ("report_ratings", "key_points"):
        return global_responder(request)
    if name in ("drift_primer", "drift_step"):
        return tree_responder(n_follow=1, max_level=0)(request)
    text = " ".join(m.get("content") or "" for m in request.get("messages", []))
    return next((said for q, (_, said) in QUESTIONS.items() if q in text), "I do not know.")


def test_bench_answers_scores_each_mode(neo4j_cfg, neo4j_config, tmp_path):
    questions = tmp_path / "questions.jsonl"
    questions.write_text(
        "".join(
            json.dumps({"id": f"q{i}", "question": q, "answer": gold, "gold_text_unit_ids": [], "hops": 2}) + "\n"
            for i, (q, (gold, _)) in enumerate(QUESTIONS.items())
        )
    )
    fake = FakeOpenAI(_model).start()
    try:
        out = tmp_path / "answers.json"
        cmd = [sys.executable, "-m", "bench", "answers", "--base-url", fake.base_url, "--model", "fake-model",
               "--index", str(SAMPLE), "--questions", str(questions), "--out", str(out), "--fresh-embeddings",
               "--neo4j-uri", neo4j_config["uri"]]  # fmt: skip
        env = {**os.environ, "NEO4J_PASSWORD": neo4j_config["password"], "OPENAI_API_KEY": "test"}
        res = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
        assert res.returncode == 0, res.stderr[-2000:]
    finally:
        fake.stop()
    raw = json.loads(out.read_text())
    assert raw["command"].startswith("python -m bench answers --base-url") and raw["machine"]["load"]
    by_mode: dict[str, list[dict]] = {}
    for row in raw["rows"]:
        by_mode.setdefault(row["mode"], []).append(row)
    assert set(by_mode) == {"local", "global", "drift", "basic", "local_context", "basic_context"}
    for mode in ("local", "global", "drift", "basic"):
        rows = by_mode[mode]
        assert [r["error"] for r in rows] == [None] * 4, rows
        assert [r["answer"] for r in rows] == [said for _, said in QUESTIONS.values()], mode
        assert [r["em"] for r in rows] == EXPECTED["em"] and [r["f1"] for r in rows] == EXPECTED["f1"], mode
        assert raw["summary"][mode]["em"] == 0.5 and raw["summary"][mode]["f1"] == 0.625
        assert all(r["llm_calls"] >= 1 for r in rows)
    for mode in ("local_context", "basic_context"):
        rows = by_mode[mode]
        assert all(r["llm_calls"] == 0 and "answer" not in r for r in rows), "offline: no model call"
        # the first three answers are in the sample's texts, the year is not
        assert [r["answer_in_context"] for r in rows] == [1.0, 1.0, 1.0, 0.0], mode
