"""The retrieval trace in Neo4j: one round trip, INCLUDED/DROPPED edges, read back, Browser Cypher, prune."""

import logging
from datetime import timedelta

import pytest

from driftgraph.config import TraceConfig
from driftgraph.errors import RequestError, RetrievalNotFound
from driftgraph.query.finish import Stored, store_trace
from driftgraph.query.requests import parse_age
from driftgraph.query.trace import EntryCandidate, Trace, TraceItem
from driftgraph.store import ingest
from driftgraph.store.traces import browser_cypher, prune_retrievals, read_retrieval


def _seed(store):
    ingest.write_documents(store, [{"id": "d1", "title": "doc"}], 10)
    ingest.write_chunks(store, [{"id": "c1", "text": "alpha", "n_tokens": 1, "document_id": "d1", "position": 0}], 10)
    ingest.write_entities(
        store,
        [
            {"id": "e1", "title": "ALPHA", "description": "a", "n_tokens": 2, "text_unit_ids": ["c1"]},
            {"id": "e2", "title": "BETA", "description": "b", "n_tokens": 2},
        ],
        10,
    )
    ingest.write_relationships(
        store, [{"id": "r1", "source_id": "e1", "target_id": "e2", "description": "ab", "weight": 1.0}], 10
    )


def _recorder():
    rec = Trace(mode="local", question="what is alpha?")
    rec.add_entry(EntryCandidate("e1", "ALPHA", 0.9, "kept", similarity=0.9, vector_rank=1))
    rec.add_entry(EntryCandidate("e2", "BETA", 0.1, "dropped", "below_threshold", similarity=0.1, vector_rank=2))
    rec.add_item(TraceItem("chunk", "c1", 5, "included", rank=1, hop="vector"))
    rec.add_item(TraceItem("entity", "e1", 4, "included", rank=1, hop="entry"))
    rec.add_item(TraceItem("relationship", "r1", 6, "dropped", "budget", rank=1))
    rec.add_item(TraceItem("report", "missing-community", 9, "dropped", "budget", rank=1))
    rec.round_trips = 2
    return rec


def test_write_read_and_browser_cypher(store, caplog):
    _seed(store)
    before = store.round_trips
    caplog.set_level(logging.WARNING, logger="driftgraph.store.traces")
    meta = Stored(query="what is alpha?", params={"k": 1}, cost={"llm_calls": 0})
    rid = store_trace(store, _recorder(), meta, TraceConfig().max_dropped)
    assert store.round_trips == before + 1
    # the short stored trace is said, with how many items it lacks
    assert [r.getMessage() for r in caplog.records] == [
        f"retrieval {rid}: 1 of 5 trace items have no node in the graph and were not linked to it"
    ]
    caplog.clear()
    data = read_retrieval(store, rid)
    assert data["retrieval"]["mode"] == "local" and data["retrieval"]["params"] == {"k": 1}
    assert data["retrieval"]["trace"]["round_trips"] == 2
    edges = {(e["edge"], e["source"], e["item_id"]) for e in data["edges"]}
    assert ("INCLUDED", "chunk", "c1") in edges and ("INCLUDED", "entity", "e1") in edges
    assert ("DROPPED", "relationship", "r1") in edges and ("DROPPED", "entry", "e2") in edges
    assert len(edges) == 4  # the item whose node does not exist is not invented
    # idempotent: writing the same id again adds nothing
    store_trace(store, _recorder(), Stored(query="q", retrieval_id=rid), TraceConfig().max_dropped)
    assert len(read_retrieval(store, rid)["edges"]) == 4
    assert caplog.records == []  # a repeat links nothing by design, and says nothing
    # the printed Browser query, run as pasted, returns the included subgraph
    text = browser_cypher(rid)
    assert "$id" not in text and rid in text
    with store._session() as session:
        rows = [r.data() for r in session.run(text)]
    assert {r["x"]["id"] for r in rows if r["x"]} == {"c1", "e1"}


def test_prune(store):
    rid = store_trace(store, _recorder(), Stored(query="q"), TraceConfig().max_dropped)
    assert prune_retrievals(store, timedelta(days=1)) == 0
    assert prune_retrievals(store, timedelta(seconds=0), dry_run=True) == 1
    assert prune_retrievals(store, timedelta(seconds=0)) == 1
    with pytest.raises(RetrievalNotFound, match="no retrieval"):
        read_retrieval(store, rid)


def test_browser_cypher_escapes_quotes():
    assert "'a\\'b'" in browser_cypher("a'b")


def test_parse_age():
    assert parse_age("30d") == timedelta(days=30) and parse_age("2w") == timedelta(weeks=2)
    with pytest.raises(RequestError, match="older-than"):
        parse_age("yesterday")
