"""The two indexes issue 37 item 7 compares, over the same passages and the same questions.

The real-model build (``musique.py``) indexes 216 passages: every dev question's gold passages and two hard
distractors each. The triples-built index holds all 1,890 passages of the MuSiQue sample, so recall on it is
measured against eight times as many distractors: comparing the two as they are would credit the small index
with an easier haystack. ``subset`` therefore writes the triples-built index cut to the same passages (GraphRAG
parquet): text units and documents of those passages, the entities and relationships they support (their
text-unit lists, degrees and frequencies recounted inside the cut), and the communities that keep at least one
entity, with member lists cut the same way and their report text as it was; a community left with fewer than
``report_min_size`` entities loses its report, the rule the real-model build applies (``index.report_min_size``
in ``musique.SETTINGS``), so both indexes hold reports of the same kind of community. ``questions`` gives an exported
real-model index the dev questions with its own text-unit ids, matched by passage text (the build writes each
passage unchanged as one document of one chunk).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from bench.run import data

TABLES = ("documents", "text_units", "entities", "relationships", "communities", "community_reports")


def _read(root: Path, name: str) -> tuple[Any, list[dict[str, Any]]]:
    import pyarrow.parquet as pq

    table = pq.read_table(data.require(root / f"{name}.parquet"))
    return table.schema, table.to_pylist()


def _write(out: Path, name: str, schema: Any, rows: list[dict[str, Any]]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.Table.from_pylist(rows, schema=schema), out / f"{name}.parquet")


def _cut(ids: Any, keep: set[Any]) -> list[Any]:
    return [i for i in (ids if ids is not None else []) if i in keep]


def cut_rows(
    tables: dict[str, list[dict[str, Any]]], passages: set[str], report_min_size: int = 1
) -> dict[str, list[dict[str, Any]]]:
    """The index's rows restricted to ``passages`` (text-unit ids); every id list points only at kept rows, and
    only communities of at least ``report_min_size`` kept entities keep their report."""
    units = [dict(u) for u in tables["text_units"] if u["id"] in passages]
    found = {u["id"] for u in units}
    if missing := sorted(passages - found):
        raise SystemExit(f"musique subset: {len(missing)} passages are not in the index, e.g. {missing[0]}")
    entities = []
    for e in tables["entities"]:
        support = _cut(e["text_unit_ids"], found)
        if support:
            entities.append({**e, "text_unit_ids": support, "frequency": len(support)})
    titles = {e["title"] for e in entities}
    relationships = []
    for r in tables["relationships"]:
        support = _cut(r["text_unit_ids"], found)
        if support and r["source"] in titles and r["target"] in titles:
            relationships.append({**r, "text_unit_ids": support})
    degree = Counter(t for r in relationships for t in (r["source"], r["target"]))
    for e in entities:
        e["degree"] = degree[e["title"]]
    for r in relationships:
        r["combined_degree"] = degree[r["source"]] + degree[r["target"]]
    entity_ids, rel_ids = {e["id"] for e in entities}, {r["id"] for r in relationships}
    for u in units:
        u["entity_ids"], u["relationship_ids"] = _cut(u["entity_ids"], entity_ids), _cut(u["relationship_ids"], rel_ids)
    documents = []
    for d in tables["documents"]:
        kept = _cut(d["text_unit_ids"], found)
        if kept:
            documents.append({**d, "text_unit_ids": kept})
    communities = []
    for c in tables["communities"]:
        members = _cut(c["entity_ids"], entity_ids)
        if members:
            cut = {"relationship_ids": _cut(c["relationship_ids"], rel_ids), "size": len(members)}
            communities.append({**c, "entity_ids": members, "text_unit_ids": _cut(c["text_unit_ids"], found), **cut})
    numbers = {c["community"] for c in communities}
    for c in communities:  # a community holds its children's entities, so a kept child's parent is kept too
        c["children"] = _cut(c["children"], numbers)
    size = {c["community"]: c["size"] for c in communities}
    reports = [
        {**r, "children": _cut(r["children"], numbers), "size": size[r["community"]]}
        for r in tables["community_reports"]
        if r["community"] in numbers and size[r["community"]] >= report_min_size
    ]
    out = {"documents": documents, "text_units": units, "entities": entities, "relationships": relationships}
    return {**out, "communities": communities, "community_reports": reports}


def subset(root: Path, corpus: dict[str, Any], out: Path, report_min_size: int = 1) -> dict[str, int]:
    """Write ``root`` cut to the corpus passages under ``out``, with the dev questions whose gold it holds."""
    passages = set(corpus["passages"])
    schemas, tables = {}, {}
    for name in TABLES:
        schemas[name], tables[name] = _read(root, name)
    cut = cut_rows(tables, passages, report_min_size)
    out.mkdir(parents=True, exist_ok=True)
    for name in TABLES:
        _write(out, name, schemas[name], cut[name])
    lines = [
        line
        for line in (root / "questions_dev.jsonl").read_text(encoding="utf-8").splitlines()
        if line.strip() and json.loads(line)["id"] in corpus["questions"]
    ]
    (out / "questions_dev.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return {name: len(rows) for name, rows in cut.items()} | {"questions": len(lines)}


def questions_by_text(index: Path, root: Path, corpus: dict[str, Any]) -> int:
    """``index/questions_dev.jsonl``: the dev questions with the gold passages' ids as ``index`` numbers them,
    found by their text. A gold passage whose text is not one text unit there (split by chunking) is an error."""
    by_text = {text.strip(): uid for uid, text in data.text_units(index).items()}
    units = data.text_units(root)
    rows, lost = [], []
    for line in (root / "questions_dev.jsonl").read_text(encoding="utf-8").splitlines():
        if not line.strip() or (q := json.loads(line))["id"] not in corpus["questions"]:
            continue
        gold = [by_text.get(units[g].strip()) for g in q["gold_text_unit_ids"]]
        lost += [g for g, new in zip(q["gold_text_unit_ids"], gold, strict=True) if new is None]
        rows.append(json.dumps({**q, "gold_text_unit_ids": gold}, ensure_ascii=False))
    if lost:
        raise SystemExit(f"musique questions: {len(lost)} gold passages are not one text unit in {index}: {lost[0]}")
    (index / "questions_dev.jsonl").write_text("\n".join(rows) + "\n", encoding="utf-8")
    return len(rows)
