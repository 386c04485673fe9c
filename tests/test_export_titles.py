"""An index whose entities share a title (merged by title *and* type) exports as a GraphRAG index that imports:
titles unique, each relationship's endpoints naming the entity it links. A 1.5B model's MuSiQue build had
``CULTURE`` twice, and its export was refused by driftgraph's own importer."""

from __future__ import annotations

import json
from typing import Any

import pyarrow.parquet as pq
import pytest

from driftgraph.api import Engine
from driftgraph.importers.export import unique_titles
from tests.conftest import make_config
from tests.support.index_responder import data_of, responder

pytestmark = pytest.mark.e2e

TWO_CULTURES = {
    "Anna": ("Anna opened the culture festival.", "event"),
    "Bert": ("Bert runs Culture, a magazine publisher.", "organization"),
}


def _extraction(request: dict[str, Any]) -> str:
    fmt = (request.get("response_format") or {}).get("json_schema") or {}
    if fmt.get("name") != "extract_graph":
        return responder(request)
    person = next(p for p, (text, _) in TWO_CULTURES.items() if text in data_of(request))
    kind = TWO_CULTURES[person][1]
    return json.dumps(
        {
            "entities": [
                {"title": person.upper(), "type": "person", "description": f"{person} of the test"},
                {"title": "CULTURE", "type": kind, "description": f"Culture, an {kind}"},
            ],
            "relationships": [{"source": person.upper(), "target": "CULTURE", "description": "linked"}],
        }
    )


def test_entities_sharing_a_title_export_with_unique_titles_and_import_again(neo4j_config, fake_llm, tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    for person, (text, _) in TWO_CULTURES.items():
        (docs / f"{person}.txt").write_text(text, encoding="utf-8")
    fake_llm.responder = _extraction
    cfg = make_config(
        neo4j_config,
        llm={"base_url": fake_llm.base_url, "model": "fake-model", "backoff_base_s": 0.0},
        index={"cache_dir": str(tmp_path / "cache"), "max_gleanings": 0},
    )
    out = tmp_path / "export"
    with Engine(cfg) as eng:
        eng.index(docs, reset=True)
        eng.export_graphrag(out)
        entities = pq.read_table(out / "entities.parquet").to_pylist()
        titles = [e["title"] for e in entities]
        assert len(titles) == len(set(titles)) == 4 and "CULTURE" in titles
        by_title = {e["title"]: e for e in entities}
        for r in pq.read_table(out / "relationships.parquet").to_pylist():
            target = by_title[r["target"]]
            person = r["source"].title()
            assert target["type"].lower() == TWO_CULTURES[person][1], (r, target)
        summary = eng.import_graphrag(out, reset=True)  # driftgraph's own importer requires unique titles
        assert summary.to_dict()["counts"]["__Entity__"] == 4


def test_the_most_connected_entity_keeps_a_shared_title() -> None:
    rows = [
        {"id": "b", "title": "CULTURE", "type": "event", "degree": 1},
        {"id": "a", "title": "CULTURE", "type": "organization", "degree": 3},
        {"id": "c", "title": "CULTURE (event)", "type": "event", "degree": 0},
        {"id": "d", "title": "ANNA", "type": "person", "degree": 1},
    ]
    got = unique_titles(rows)
    assert got["a"] == "CULTURE" and got["d"] == "ANNA" and got["c"] == "CULTURE (event)"
    assert got["b"] == "CULTURE (b)"  # "CULTURE (event)" is another entity's title already
    assert len(set(got.values())) == 4
