"""The triples-built MuSiQue index cut to the real-model build's passages (issue 37 item 7's fair partner): every
id list points only at kept rows, the counts inside the cut are recounted, the questions' gold passages are
found again by text, and driftgraph imports the cut into a real Neo4j and retrieves a gold passage from it."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from bench.realmodel.musique_subset import TABLES, questions_by_text, subset


def _corpus(root: Path, n: int = 3) -> dict:
    """The first ``n`` dev questions' gold passages plus two passages no question needs, as the build's corpus."""
    questions = [json.loads(line) for line in (root / "questions_dev.jsonl").read_text().splitlines()[:n]]
    gold = {g for q in questions for g in q["gold_text_unit_ids"]}
    others = sorted(set(pq.read_table(root / "text_units.parquet", columns=["id"])["id"].to_pylist()) - gold)[:2]
    per_q = {q["id"]: {"gold": q["gold_text_unit_ids"], "distractors": others} for q in questions}
    return {"passages": sorted(gold | set(others)), "questions": per_q}


def _rows(folder: Path, name: str) -> list[dict]:
    return pq.read_table(folder / f"{name}.parquet").to_pylist()


def test_the_cut_index_points_only_at_what_it_keeps(shared_data: Path, tmp_path: Path) -> None:
    root = shared_data / "musique"
    corpus = _corpus(root)
    out = tmp_path / "cut"
    counts = subset(root, corpus, out)
    t = {name: _rows(out, name) for name in TABLES}
    passages = set(corpus["passages"])
    assert {u["id"] for u in t["text_units"]} == passages and counts["questions"] == 3
    assert counts["entities"] > 0 and counts["relationships"] > 0 and counts["communities"] > 0
    entity_ids, titles = {e["id"] for e in t["entities"]}, {e["title"] for e in t["entities"]}
    rel_ids = {r["id"] for r in t["relationships"]}
    numbers = {c["community"] for c in t["communities"]}
    assert all(e["text_unit_ids"] and set(e["text_unit_ids"]) <= passages for e in t["entities"])
    assert all(e["frequency"] == len(e["text_unit_ids"]) for e in t["entities"])
    degree = Counter(x for r in t["relationships"] for x in (r["source"], r["target"]))
    assert all(e["degree"] == degree[e["title"]] for e in t["entities"]), "degrees recounted inside the cut"
    assert all({r["source"], r["target"]} <= titles and set(r["text_unit_ids"]) <= passages for r in t["relationships"])
    assert all(set(u["entity_ids"]) <= entity_ids and set(u["relationship_ids"]) <= rel_ids for u in t["text_units"])
    for c in t["communities"]:
        assert c["entity_ids"] and set(c["entity_ids"]) <= entity_ids and c["size"] == len(c["entity_ids"])
        assert set(c["children"]) <= numbers and (c["parent"] == -1 or c["parent"] in numbers), c["community"]
    assert {r["community"] for r in t["community_reports"]} == numbers
    # the full index has entities the cut left out: the cut is a real cut, not a copy
    assert len(t["entities"]) < pq.read_metadata(root / "entities.parquet").num_rows
    # the gold passages are found again by their text, under the same ids here
    before = (out / "questions_dev.jsonl").read_text()
    assert questions_by_text(out, root, corpus) == 3
    assert (out / "questions_dev.jsonl").read_text().splitlines() == before.splitlines()
    # the real-model build's report rule: a community left with fewer than N entities loses its report
    small = tmp_path / "small"
    subset(root, corpus, small, report_min_size=3)
    sizes = {c["community"]: c["size"] for c in _rows(small, "communities")}
    assert sizes == {c["community"]: c["size"] for c in t["communities"]}, "the communities themselves stay"
    kept = {r["community"] for r in _rows(small, "community_reports")}
    assert kept == {n for n, size in sizes.items() if size >= 3} and 0 < len(kept) < len(sizes)


def test_a_gold_passage_split_by_chunking_is_an_error_not_a_lost_question(shared_data: Path, tmp_path: Path):
    import pyarrow as pa

    root = shared_data / "musique"
    corpus = _corpus(root, 1)
    out = tmp_path / "cut"
    subset(root, corpus, out)
    gold = next(iter(corpus["questions"].values()))["gold"][0]
    units = _rows(out, "text_units")
    for u in units:
        if u["id"] == gold:  # as if chunking had cut it in two
            u["text"] = u["text"][: len(u["text"]) // 2]
    pq.write_table(
        pa.Table.from_pylist(units, schema=pq.read_schema(out / "text_units.parquet")), out / "text_units.parquet"
    )
    with pytest.raises(SystemExit, match="1 gold passages are not one text unit"):
        questions_by_text(out, root, corpus)


@pytest.mark.neo4j
def test_driftgraph_imports_the_cut_and_finds_a_gold_passage(shared_data: Path, tmp_path: Path, neo4j_cfg) -> None:
    from driftgraph import LocalQuery
    from driftgraph.api import open_engine

    root = shared_data / "musique"
    corpus = _corpus(root, 2)
    subset(root, corpus, tmp_path / "cut")
    question = json.loads((tmp_path / "cut" / "questions_dev.jsonl").read_text().splitlines()[0])
    with open_engine(neo4j_cfg) as eng:
        eng.import_graphrag(tmp_path / "cut", reset=True, embed=True)
        res = eng.query(LocalQuery(question=question["question"], context_only=True))
    assert res.context is not None
    texts = {u["id"]: u["text"] for u in _rows(tmp_path / "cut", "text_units")}
    found = [g for g in question["gold_text_unit_ids"] if texts[g][:80] in res.context.text]
    assert found, "a gold passage of the cut index is in local search's context"
