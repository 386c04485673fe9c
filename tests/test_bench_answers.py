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
from bench.run.dg import cited
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
    assert am.in_context(["Corran Foundry"], "2|CORRAN FOUNDRY|A foundry") == 1.0, "a table cell is its own words"
    assert am.in_context(["O'Brien"], "said OBrien") == 1.0 and am.in_context(["OBrien"], "O'Brien said") == 1.0
    assert am.in_context(["Brien"], "O'Brien said") == 1.0, "punctuation read as a word break finds this too"
    assert am.exact_match("Boeing B-29 Superfortress", ["Boeing B - 29 Superfortress"]) == 1.0, "tokenised gold"
    assert am.exact_match("OBrien", ["O'Brien"]) == 1.0 and am.exact_match("O Brien", ["O'Brien"]) == 1.0
    assert am.token_f1("Boeing B-29", ["Boeing B - 29 Superfortress"]) == pytest.approx(2 * 0.75 / 1.75)


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


# -- supported: the rows an answer cites, read back from its context ------------------------------------------
GR_CONTEXT = """-----Entities-----
id|entity|description|number of relationships
1|DELIA FENN|"Delia Fenn started the Kelmouth Lantern Festival,
and ran it for ten years"|3
2|CORRAN FOUNDRY|A foundry in Kelmouth|1
-----Sources-----
id|text
5|The lantern is lit each year by Ines Halloran.
"""


def test_cited_rows_are_read_from_either_context_form():
    assert cited.cited_text("Delia Fenn [Data: Entities (1); Sources (5, 9)]", GR_CONTEXT) == (
        '1|DELIA FENN|"Delia Fenn started the Kelmouth Lantern Festival,\nand ran it for ten years"|3\n'
        "5|The lantern is lit each year by Ines Halloran.",
        3,
    ), "a multi-line cell stays with its row; an id not shown (9) adds nothing but is counted"
    blocks = "----- Source 1 -----\nCorran Foundry casts it.\n\n----- Source 2 -----\n12|not a row id, text"
    assert cited.cited_text("Corran [Data: Sources (2)]", blocks) == ("12|not a row id, text", 1)
    assert cited.cited_text("Corran [data: source (1)]", blocks)[0].startswith("Corran Foundry casts it.")
    assert cited.cited_text("Corran, no reference", blocks) == ("", 0)
    assert cited.strip_citations("Delia Fenn [Data: Sources (1, +more)].") == "Delia Fenn ."
    # what small models write instead of the asked form is read the same way, for every system
    assert cited.cited_text("Corran [Data: Source 1]", blocks)[1] == 1
    assert cited.cited_text("Corran [Source 2]", blocks) == ("12|not a row id, text", 1)
    assert cited.cited_text("Corran [Sources 1, 2]", blocks)[1] == 2
    assert cited.cited_text("Corran [1] [see note]", blocks) == ("", 0), "a bracket naming no table is no reference"
    assert cited.strip_citations("Norway [Source 1]") == "Norway"
    assert cited.strip_citations("1968[Data: Sources (5)]") == "1968"
    assert cited.cited_text("Corran (Data: Sources (2)).", blocks) == ("12|not a row id, text", 1)
    assert cited.cited_text("Corran.\n\n- Data: Sources (1, 2)\n- Other", blocks)[1] == 2
    assert cited.cited_text("Corran [Data: Sources (2)] and more", blocks)[1] == 1, "one reference read once"
    assert am.normalize(cited.strip_citations("1968 (Data: Sources (401)).")) == "1968"


def _row_of(context: str, needle: str) -> str | None:
    """The fake reader: the label of the first context row holding ``needle``, as a [Data: ...] reference."""
    table, row, block = None, None, False
    for line in context.splitlines():
        if line.startswith("----- Source "):
            table, row, block = "Sources", line.split()[2], True
        elif line.startswith("-----") and line.endswith("-----"):
            table, row, block = line.strip("-"), None, False
        elif not block and line.split("|")[0].isdigit():
            row = line.split("|")[0]
        if table and row and needle in line:
            return f"[Data: {table} ({row})]"
    return None


# question -> what the fake cites: the row holding the gold (supported), nothing, an id never shown, any row
CITES = {"Who started": "gold", "Which foundry": "none", "Who lights": "unknown", "In which year": "first"}


def _citing_model(request: dict[str, Any]) -> str:
    messages = request.get("messages", [])
    text = " ".join(m.get("content") or "" for m in messages)
    for q, (gold, said) in QUESTIONS.items():
        if q not in text:
            continue
        how = next(v for k, v in CITES.items() if q.startswith(k))
        context = messages[0].get("content") or ""
        ref = {"gold": _row_of(context, gold), "none": "", "unknown": "[Data: Sources (999)]"}.get(how)
        if how == "first":
            ref = _row_of(context, "|") or _row_of(context, " ")
        assert ref is not None, f"the fake found no row holding {gold!r}"
        return f"{said} {ref}".strip()
    return "I do not know."


def test_bench_answers_foreign_contexts_supported_and_resume(neo4j_cfg, neo4j_config, tmp_path):
    """vector and graphrag_local answered through the same call, every answer scored without its references,
        supported read from the cited rows; a --resume --rescore run asks the model nothing more and scores every kept
    answer again from its stored context (or, kept from before contexts were stored, one assembled again)."""
    questions = tmp_path / "questions.jsonl"
    questions.write_text(
        "".join(
            json.dumps({"id": f"q{i}", "question": q, "answer": gold, "gold_text_unit_ids": [], "hops": 2}) + "\n"
            for i, (q, (gold, _)) in enumerate(QUESTIONS.items())
        )
    )
    gr = tmp_path / "gr.json"
    gr.write_text(json.dumps({"rows": [
        {"id": f"q{i}", "context": GR_CONTEXT, "system": "GraphRAG prompt stand-in. Tables:\n" + GR_CONTEXT}
        for i in range(len(QUESTIONS))
    ]}))  # fmt: skip
    out = tmp_path / "answers.json"
    base = ["--model", "fake-model", "--index", str(SAMPLE), "--questions", str(questions), "--out", str(out),
            "--fresh-embeddings", "--neo4j-uri", neo4j_config["uri"], "--modes", "local,basic,vector,graphrag_local",
            "--graphrag-contexts", str(gr), "--budget", "1500",
            "--config-extra", json.dumps({"local": {"response_type": "terse answer"}})]  # fmt: skip
    env = {**os.environ, "NEO4J_PASSWORD": neo4j_config["password"], "OPENAI_API_KEY": "test"}
    fake = FakeOpenAI(_citing_model).start()
    try:
        cmd = [sys.executable, "-m", "bench", "answers", "--base-url", fake.base_url, *base]
        res = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
        assert res.returncode == 0, res.stderr[-2000:]
        first_calls = len(fake.chat_requests())
        first = json.loads(out.read_text())
        for row in first["rows"]:  # rows kept from before contexts were stored: --rescore assembles them again
            if row["id"] == "q0" and row["mode"] in ("local", "vector"):
                row.pop("context")
        out.write_text(json.dumps(first))
        again = [*cmd, "--resume", "--rescore", "--keep-index"]
        res = subprocess.run(again, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
        assert res.returncode == 0, res.stderr[-2000:]
        assert len(fake.chat_requests()) == first_calls, "a resumed run asks nothing already answered"
        raw = json.loads(out.read_text())
    finally:
        fake.stop()
    rebuilt = sorted((r["mode"], r["id"]) for r in raw["rows"] if r.get("context_rebuilt"))
    assert rebuilt == [("local", "q0"), ("vector", "q0")], "only the rows without a stored context"
    assert all(r.get("context") for r in raw["rows"] if "answer" in r)
    assert raw["complete"] is True and raw["budget"] == 1500
    local_prompts = [
        r["messages"][0]["content"] for r in fake.chat_requests() if "data tables" in r["messages"][0]["content"]
    ]
    assert local_prompts and all(p.rstrip().endswith("Write a terse answer.") for p in local_prompts), (
        "--config-extra reaches the run, and local.response_type the local prompt"
    )
    by_mode: dict[str, list[dict]] = {}
    for row in raw["rows"]:
        by_mode.setdefault(row["mode"], []).append(row)
    for mode in ("local", "basic", "vector", "graphrag_local"):
        rows = by_mode[mode]
        assert [r["error"] for r in rows] == [None] * 4, rows
        assert [r["em"] for r in rows] == EXPECTED["em"] and [r["f1"] for r in rows] == EXPECTED["f1"], mode
        # the gold's row cited; nothing cited; an id never shown; any row, but the year is in none of them
        assert [r["supported"] for r in rows] == [1.0, 0.0, 0.0, 0.0], (mode, [r["answer"] for r in rows])
        assert [r["references"] for r in rows] == [1, 0, 1, 1], mode
        if mode != "graphrag_local":
            assert all(r["context_tokens"] <= 1500 for r in rows), (mode, "the budget holds")
        summary = raw["summary"][mode]
        assert summary["supported"] == 0.25 and summary["em"] == 0.5
        lo, hi = summary["em_ci"]
        assert 0.0 <= lo <= 0.5 <= hi <= 1.0
    assert raw["summary"]["vector"]["em_vs_local"]["diff"] == 0.0, "paired with local on the same questions"
    assert all(r["llm_calls"] == 1 for r in by_mode["vector"] + by_mode["graphrag_local"])
    sent = [r for r in fake.chat_requests() if "GraphRAG prompt stand-in" in r["messages"][0]["content"]]
    assert len(sent) == 4 and all(r["messages"][1]["content"] in QUESTIONS for r in sent), "its prompt, as given"


def test_answers_table_shows_each_mode_with_intervals_and_pairs():
    from bench.report.answers import table

    s_local = {
        "questions": 30,
        "errors": 1,
        "failed_answers": 2,
        "context_tokens_mean": 1990.4,
        "em": 0.4,
        "em_ci": [0.23, 0.57],
        "f1": 0.5,
        "f1_ci": [0.33, 0.66],
        "supported": 0.3,
        "supported_ci": [0.13, 0.47],
    }
    s_basic = {
        **s_local,
        "errors": 0,
        "failed_answers": 0,
        "em": 0.3,
        "supported": None,
        "em_vs_local": {"diff": -0.1, "lo": -0.23, "hi": 0.03, "significant": False},
        "f1_vs_local": {"diff": -0.2, "lo": -0.33, "hi": -0.07, "significant": True},
    }
    raw = {
        "endpoint": {"model": "m"},
        "budget": 2000,
        "complete": False,
        "command": "python -m bench answers",
        "machine": {"date": "D"},
        "summary": {"local_context": {"questions": 30}, "local": s_local, "basic": s_basic},
    }
    lines = table(raw)
    assert "in progress" in lines[0] and "budget 2000" in lines[0]
    rows = [line for line in lines if line.startswith(("| local | 30 |", "| basic | 30 |")) and line.count("|") == 10]
    assert rows == [
        "| local | 30 | 0.400 [0.23, 0.57] | 0.500 [0.33, 0.66] | 0.300 [0.13, 0.47] | 3 | 1,990 | 0.0 | 0 |",
        "| basic | 30 | 0.300 [0.23, 0.57] | 0.500 [0.33, 0.66] | - | 0 | 1,990 | 0.0 | 0 |",
    ], "the offline context rows are not asked modes; failed answers count errors too"
    assert "| basic | 30 | -0.100 [-0.23, +0.03] n.s. | -0.200 [-0.33, -0.07] | - |" in lines


def _row(mode: str, qid: str, f1: float) -> dict[str, Any]:
    row = {"mode": mode, "id": qid, "error": None, "answer": "a", "em": 0.0, "f1": f1, "answer_in_context": 1.0}
    return {**row, "context_tokens": 100, "llm_calls": 1, "prompt_tokens": 200}


def test_a_mode_stopped_part_way_is_paired_with_local_on_what_it_answered(tmp_path):
    """DRIFT on a slow CPU answers fewer questions than local (or local is reused from an earlier run): the
    pairing must use the questions both answered, in the same order, never drop the comparison or misalign."""
    from bench.run.dg.answers import reuse, summaries

    other = tmp_path / "earlier.json"
    earlier = [_row("local", q, f) for q, f in (("q1", 1.0), ("q2", 0.0), ("q3", 1.0), ("q9", 1.0))]
    earlier.append(_row("basic", "q1", 0.5))
    other.write_text(json.dumps({"command": "python -m bench answers X", "budget": 2000, "rows": earlier}))
    questions = [{"id": q} for q in ("q1", "q2", "q3")]
    kept, note = reuse([_row("local", "q2", 0.25)], f"{other}:local", questions)
    assert sorted((r["mode"], r["id"], r["f1"]) for r in kept) == [
        ("local", "q1", 1.0),
        ("local", "q2", 0.25),  # this run's own row wins over the reused one
        ("local", "q3", 1.0),
    ], "only the named mode, only this run's questions"
    assert note["rows"] == 2 and note["modes"] == ["local"] and note["command"] == "python -m bench answers X"
    drift = [_row("drift", "q3", 0.0), _row("drift", "q1", 1.0)]  # stopped before q2, answered out of order
    pair = summaries(kept + drift)["drift"]["f1_vs_local"]
    assert pair["n"] == 2 and pair["diff"] == -0.5 and pair["ties"] == 1 and pair["losses"] == 1
    with pytest.raises(SystemExit, match="FILE:MODES"):
        reuse([], str(other), questions)
