"""A small model that loops: the loop guard cuts the streamed reply, the complete records are kept without a
repair call, and the cut reply replays from the cache (issue 37: the 1.5B model listed the same ten entities
until ``max_tokens``, then did the same on the repair, on every resumed run)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from driftgraph.api import Engine
from driftgraph.errors import ReplyFormatError
from driftgraph.index.estimate import estimate_index
from driftgraph.llm.jsonreply import salvage_json_object
from driftgraph.llm.loops import LoopWatch
from tests.conftest import make_config
from tests.support.fake_openai import Cut
from tests.support.index_responder import data_of, responder

PLACES = ("Salem", "Arnold", "Oakville", "Dry Fork", "Maramec Spring", "Sullivan")
RIVER = (
    "The Meramec River rises near Salem and joins the Mississippi at Arnold, by Oakville.\n\n"
    "Its size grows at the Dry Fork, and boats use it from Maramec Spring down past Sullivan.\n"
)
FAIR = "The Lantern Fair of Harbourton is held by the Guild of Lamplighters every winter.\n"


def _entity(title: str) -> str:
    return json.dumps({"title": title, "type": "geo", "description": f"{title} lies on the Meramec River."})


def looping_reply() -> str:
    """Two records, then the same four over and over: what greedy decoding does when it falls into a cycle."""
    cycle = ", ".join(_entity(t) for t in PLACES[2:])
    return '{"entities": [' + ", ".join(_entity(t) for t in PLACES[:2]) + ", " + ", ".join([cycle] * 400)


def _distinct_entities(text: str) -> list[str]:
    return [e["title"] for e in salvage_json_object(text)["entities"]]


# -- the parts ---------------------------------------------------------------------------------------------


def test_the_watch_fires_on_a_cycle_and_not_on_a_long_reply_that_merely_shares_sentences():
    watch, fed = LoopWatch(), 0
    for piece in looping_reply().split(" "):
        fed += len(piece) + 1
        if watch.feed(piece + " "):
            break
    assert watch.looping and fed < 4_000  # cut within a few cycles of a reply of ~100,000 characters

    honest = LoopWatch()  # 300 distinct records, every description the same sentence
    text = ", ".join(_entity(f"Place {i}") for i in range(300))
    assert not any(honest.feed(text[i : i + 7]) for i in range(0, len(text), 7))


def test_salvage_keeps_complete_records_closes_what_was_open_and_refuses_when_none_was_complete():
    cut = '{"entities": [{"title": "A", "type": "geo"}, {"title": "B", "type": "ge'
    assert salvage_json_object(cut) == {"entities": [{"title": "A", "type": "geo"}]}
    nested = '{"entities": [{"title": "A"}], "relationships": [{"source": "A", "target": "B"}, {"source": "A", "tar'
    assert salvage_json_object(nested) == {
        "entities": [{"title": "A"}],
        "relationships": [{"source": "A", "target": "B"}],
    }
    braces_in_text = '{"entities": [{"title": "x}]{", "type": "geo"}, {"title": "y'
    assert salvage_json_object(braces_in_text) == {"entities": [{"title": "x}]{", "type": "geo"}]}
    with pytest.raises(ReplyFormatError):
        salvage_json_object('{"entities": [{"title": "A", "ty')
    assert salvage_json_object('{"entities": []} trailing prose') == {"entities": []}


# -- the whole run, real Neo4j, the real openai client against the fake server --------------------------------


def _docs(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "river.md").write_text(RIVER, encoding="utf-8")
    (docs / "fair.md").write_text(FAIR, encoding="utf-8")
    return docs


def _extractions(fake: Any) -> list[dict[str, Any]]:
    return [
        r
        for r in fake.chat_requests()
        if "Meramec" in data_of(r)
        and ((r.get("response_format") or {}).get("json_schema") or {}).get("name") == "extract_graph"
    ]


@pytest.mark.e2e
@pytest.mark.parametrize("how", ["loop_guard", "max_tokens"])
def test_a_looping_extraction_keeps_its_records_with_one_call_and_replays_from_the_cache(
    neo4j_cfg, neo4j_config, fake_llm, tmp_path, how
):
    def looping(request: dict[str, Any]) -> str:
        if "Meramec" in data_of(request):
            fmt = (request.get("response_format") or {}).get("json_schema") or {}
            if fmt.get("name") == "extract_graph":
                text = looping_reply()
                return text if how == "loop_guard" else Cut(text[:3_000])
        return responder(request)

    fake_llm.responder = looping
    index = {"cache_dir": str(tmp_path / "cache"), "max_gleanings": 0, "loop_guard": how == "loop_guard"}
    cfg = make_config(neo4j_config, llm={"base_url": fake_llm.base_url, "api_key": "k", "model": "m"}, index=index)
    docs = _docs(tmp_path)
    with Engine(cfg) as eng:
        summary = eng.index(docs)
        extract = summary.llm["extract"]
        rows = eng.store.read("tests/entity_descriptions")
    asked = _extractions(fake_llm)
    assert len(asked) == 1 and len(asked[0]["messages"]) == 1  # no repair request
    assert bool(asked[0].get("stream")) == (how == "loop_guard")
    assert summary.failures.count == 0
    assert extract["salvaged"] == 1 and extract["unparsed"] == 0
    assert extract["loops_cut"] == (1 if how == "loop_guard" else 0)
    found = {r["title"].lower(): r["description"] for r in rows}
    for place in PLACES:  # every distinct record, each description once (the loop's copies were dropped)
        assert found[place.lower()].count("lies on the Meramec River") == 1, found.get(place.lower())
    assert "harbourton" in found and "guild" in found  # the other document was extracted as usual

    cached = [json.loads(p.read_text()) for p in (tmp_path / "cache").glob("chat/*/*.json")]
    cut = [c for c in cached if c["finish_reason"] == ("loop" if how == "loop_guard" else "length")]
    assert len(cut) == 1 and len(cut[0]["text"]) < len(looping_reply()) // 10

    before = len(fake_llm.chat_requests())
    with Engine(cfg) as eng:
        again = eng.index(docs)
    assert len(fake_llm.chat_requests()) == before  # the cut reply replays: no call is paid twice
    assert again.llm["extract"]["salvaged"] == 1 and again.failures.count == 0
    # the estimate replays it the same way: no repair counted, and the later stages counted on the real graph
    stages = {s["stage"]: s for s in estimate_index(cfg, docs)["stages"]}
    assert stages["extract"]["calls"] == 0 and stages["extract"]["cached"] == 2, stages["extract"]
    assert stages["report"]["basis"] == "counted" and stages["report"]["calls"] == 0
