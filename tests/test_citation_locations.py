"""A cited source resolves to where its chunk came from, as a record beside the ids; the answer text is untouched."""

from __future__ import annotations

from driftgraph.query.citations import check_local, map_citations

IDS = {"Sources": {1: "c-a", 3: "c-b"}, "Entities": {1: "e-x"}}
WHERE = {"c-a": "pages 3-4", "c-b": None}


def test_local_lists_each_cited_source_once_with_its_location():
    answer = "Yes [Data: Sources (3, 1); Entities (1)] and again [Data: Sources (1, 9)]."
    out = check_local(answer, IDS, WHERE)
    assert out["cited_sources"] == [
        {"ref": 1, "id": "c-a", "location": "pages 3-4"},
        {"ref": 3, "id": "c-b", "location": None},
    ]
    assert out["cited"] == {"Sources": ["c-b", "c-a"], "Entities": ["e-x"]} and out["unmapped"] == ["Sources 9"]
    assert "cited_sources" not in check_local(answer, IDS)  # without locations the record is as before


def test_basic_lists_cited_sources_the_same_way():
    out = map_citations("x [Data: Sources (3)] y [Data: Sources (5)]", "Sources", {1: "c-a", 3: "c-b"}, WHERE)
    assert out["sources"] == {"3": "c-b"} and out["unmapped"] == [5]
    assert out["cited_sources"] == [{"ref": 3, "id": "c-b", "location": None}]
    one = map_citations("[Data: Sources (1)]", "Sources", {1: "c-a"}, WHERE)["cited_sources"]
    assert one == [{"ref": 1, "id": "c-a", "location": "pages 3-4"}]
