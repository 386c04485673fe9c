"""The real-model MuSiQue corpus (issue 37, item 7): chosen by its stated rule, and indexed so that every passage
is one chunk holding the passage verbatim, which evidence recall needs to find it."""

from __future__ import annotations

import json
from pathlib import Path

from bench.realmodel import musique
from bench.run import data
from driftgraph.config import IndexConfig
from driftgraph.index.chunk import chunk_documents
from driftgraph.index.load import load_documents


def corpus() -> dict:
    return json.loads(musique.CORPUS.read_text(encoding="utf-8"))


def test_every_dev_question_brings_its_gold_and_two_non_gold_passages() -> None:
    c = corpus()
    questions = {q.id: q for q in data.questions()}
    assert set(c["questions"]) == set(questions)
    wanted: set[str] = set()
    for qid, row in c["questions"].items():
        assert row["gold"] == list(questions[qid].gold)
        assert len(row["distractors"]) == musique.DISTRACTORS
        assert not set(row["distractors"]) & set(row["gold"])
        wanted |= {*row["gold"], *row["distractors"]}
    assert c["passages"] == sorted(wanted)


def test_each_passage_is_one_document_and_one_verbatim_chunk(tmp_path: Path) -> None:
    c = corpus()
    assert musique.write_documents(c, tmp_path) == len(c["passages"])
    cfg = IndexConfig()
    report = load_documents(tmp_path, cfg)
    assert len(report.documents) == len(c["passages"]) and not report.skipped
    chunks = chunk_documents(report.documents, cfg.chunk_size, cfg.chunk_overlap, "cl100k_base")
    assert len(chunks) == len(c["passages"])
    units = data.text_units()
    assert {ch.text for ch in chunks} == {units[u] for u in c["passages"]}
