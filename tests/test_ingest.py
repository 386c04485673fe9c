"""The shared batched writers (store/ingest.py) against a real Neo4j, with tiny hand-made rows."""

from __future__ import annotations

import numpy as np

from driftgraph.store import ingest
from tests.support.cypher import q as _q


def _graph(store, batch_size: int = 2) -> None:
    ingest.write_documents(store, [{"id": "d1", "title": "Doc", "text": "a b c", "metadata": {"k": 1}}], batch_size)
    ingest.write_chunks(
        store,
        [
            {"id": "c2", "text": "second chunk", "document_id": "d1", "position": 1},
            {"id": "c1", "text": "first chunk", "document_id": "d1", "position": 0},
            {"id": "c3", "text": "third chunk", "document_id": "d1", "position": 2},
        ],
        batch_size,
        tokens=len,
    )
    ingest.write_entities(
        store,
        [
            {"id": "e1", "title": "ALPHA", "description": "first", "text_unit_ids": ["c1", "c2"]},
            {"id": "e2", "title": "BETA", "description": "second", "text_unit_ids": ["c3", "nope"]},
        ],
        batch_size,
        tokens=len,
    )
    written = ingest.write_relationships(
        store,
        [
            {"id": "r1", "source_id": "e1", "target_id": "e2", "source": "ALPHA", "target": "BETA", "description": "x"},
            {"id": "r2", "source_id": "e1", "target_id": "ghost", "description": "dangling"},
        ],
        batch_size,
        tokens=len,
    )
    assert written == 1
    written, missing = ingest.write_communities(
        store,
        [
            {"id": "k1", "community": 1, "level": 1, "parent": 0, "title": "Community 1", "entity_ids": ["e1"]},
            {"id": "k0", "community": 0, "level": 0, "parent": -1, "title": "Community 0", "entity_ids": ["e1", "e2"]},
            {"id": "k2", "community": 2, "level": 1, "parent": 7, "title": "Community 2", "entity_ids": ["e2"]},
        ],
        batch_size,
    )
    assert (written, missing) == (3, 1)
    reports = [{"community": 0, "report_id": "rep0", "title": "Report zero", "full_content": "# zero", "findings": []}]
    assert ingest.write_community_reports(store, reports, batch_size, tokens=len) == 1
    claims = [{"id": "cl1", "subject": "ALPHA", "subject_entity_id": "e1", "text_unit_id": "c2", "type": "T"}]
    assert ingest.write_claims(store, claims, batch_size) == 1


def test_writers_make_the_graph_model_and_are_idempotent(store):
    _graph(store)
    first = store.read("admin/counts")[0]
    _graph(store)  # a second run changes nothing
    assert store.read("admin/counts")[0] == first
    assert first["chunks"] == 3 and first["entities"] == 2 and first["relationships"] == 1
    assert first["communities"] == 3 and first["claims"] == 1
    nexts = _q(store, "MATCH (a:Chunk)-[:NEXT_CHUNK]->(b:Chunk) RETURN a.id AS a, b.id AS b ORDER BY a")
    assert nexts == [{"a": "c1", "b": "c2"}, {"a": "c2", "b": "c3"}]
    has = _q(store, "MATCH (c:Chunk)-[:HAS_ENTITY]->(e) RETURN c.id AS c, e.id AS e ORDER BY c")
    assert [(h["c"], h["e"]) for h in has] == [("c1", "e1"), ("c2", "e1"), ("c3", "e2")]
    parents = _q(store, "MATCH (c:__Community__)-[:PARENT]->(p) RETURN c.id AS c, p.id AS p")
    assert parents == [{"c": "k1", "p": "k0"}]
    members = _q(store, "MATCH (e)-[:IN_COMMUNITY]->(c:__Community__ {id: 'k0'}) RETURN count(e) AS n")
    assert members[0]["n"] == 2
    k0 = _q(store, "MATCH (c:__Community__ {id: 'k0'}) RETURN c.title AS t, c.community_title AS ct, c.n_tokens AS n")
    assert k0 == [{"t": "Report zero", "ct": "Community 0", "n": len("# zero")}]
    ent = _q(store, "MATCH (e:__Entity__ {id: 'e1'}) RETURN e.n_tokens AS n")
    assert ent[0]["n"] == len("ALPHA: first")
    rel = _q(store, "MATCH ()-[r:RELATED]->() RETURN r.n_tokens AS n")
    assert rel[0]["n"] == len("ALPHA -> BETA: x")
    claim = _q(store, "MATCH (c:Claim)-[:ABOUT]->(e), (c)-[:FOUND_IN]->(ch) RETURN e.id AS e, ch.id AS ch")
    assert claim == [{"e": "e1", "ch": "c2"}]
    meta = _q(store, "MATCH (d:Document) RETURN d.metadata AS m")
    assert meta == [{"m": '{"k": 1}'}]


def test_embed_pending_and_changed_text_drops_stale_vector(store):
    _graph(store)
    assert ingest.pending_embedding_counts(store) == {"entity": 2, "chunk": 3, "community": 1}
    seen: list[str] = []

    def fake_embed(texts: list[str]) -> np.ndarray:
        seen.extend(texts)
        return np.ones((len(texts), 4), dtype=np.float32)

    for kind in ingest.EMBED_KINDS:
        ingest.embed_pending(store, kind, fake_embed, page_size=2)
    assert "ALPHA:first" in seen and "# zero" in seen
    assert ingest.pending_embedding_counts(store) == {"entity": 0, "chunk": 0, "community": 0}
    _graph(store)  # same texts: vectors stay
    assert ingest.pending_embedding_counts(store) == {"entity": 0, "chunk": 0, "community": 0}
    ingest.write_entities(store, [{"id": "e1", "title": "ALPHA", "description": "changed"}], 10)
    assert ingest.pending_embedding_counts(store)["entity"] == 1


def test_delete_helpers(store):
    _graph(store)
    ingest.delete_documents(store, ["d1"], 10)
    ingest.delete_communities(store)
    counts = store.read("admin/counts")[0]
    assert counts["documents"] == 0 and counts["chunks"] == 0 and counts["claims"] == 0
    assert counts["communities"] == 0 and counts["entities"] == 2
