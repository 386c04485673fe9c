"""Graphs as other tools write them, for the adopt tests: LLM Graph Builder's and neo4j-graphrag's shapes built
with plain Cypher (test-only statements), a whole-database snapshot, and a wipe of everything incl. indexes.

Entities come from the same capitalised-name rule the fake extraction model uses (index_responder.names), so
the graphs are deterministic; the chunk vectors come from driftgraph's local embedder (all-MiniLM-L6-v2, the
model LLM Graph Builder uses by default).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tests.support.cypher import q
from tests.support.index_responder import kind, names

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "docs"
Embed = Callable[[list[str]], Any]
REL_TYPES = ("WORKS_WITH", "LOCATED_IN", "SUPPLIES")


def wipe(store: Any) -> None:
    """Every node, constraint and index (the other tools' too), so no test sees another's schema."""
    # relationships first, in bounded batches: DETACH DELETE of 5000 nodes at once deletes all their
    # relationships in one transaction, which ran out of memory on a big bench database
    q(store, "MATCH ()-[r]->() CALL (r) { DELETE r } IN TRANSACTIONS OF 10000 ROWS")
    q(store, "MATCH (n) CALL (n) { DELETE n } IN TRANSACTIONS OF 10000 ROWS")
    for row in q(store, "SHOW CONSTRAINTS YIELD name"):
        q(store, f"DROP CONSTRAINT `{row['name']}` IF EXISTS")
    for row in q(store, "SHOW INDEXES YIELD name, type WHERE type <> 'LOOKUP'"):
        q(store, f"DROP INDEX `{row['name']}` IF EXISTS")


def doc_chunks(path: Path, per_chunk: int = 2) -> list[str]:
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", path.read_text(encoding="utf-8")) if s.strip()]
    return [" ".join(sentences[i : i + per_chunk]) for i in range(0, len(sentences), per_chunk)]


def extract(text: str) -> tuple[list[str], list[tuple[str, str, str]]]:
    """(entity names, typed relations) of one chunk: consecutive names of a sentence are related."""
    found: list[str] = []
    rels = []
    for sentence in re.split(r"(?<=[.!?])\s+", text):
        ns = names(sentence)
        found += [n for n in ns if n not in found]
        for a, b in zip(ns, ns[1:], strict=False):
            rels.append((a, REL_TYPES[len(a + b) % len(REL_TYPES)], b))
    return found, rels


def label(name: str) -> str:
    return kind(name).capitalize()


def vec(v: Any) -> list[float]:
    return [float(x) for x in v]


def llm_graph_builder(store: Any, embed: Embed, files: Sequence[Path]) -> None:
    """LLM Graph Builder's shape: Document {fileName ...}, Chunk {id: sha1, text, position, length, fileName,
    content_offset, embedding} with PART_OF / FIRST_CHUNK / NEXT_CHUNK / HAS_ENTITY / SIMILAR, entities
    (:Label:__Entity__ {id}) some with a description and a vector, typed relations; its own indexes."""
    q(store, "CREATE CONSTRAINT IF NOT EXISTS FOR (n:__Entity__) REQUIRE n.id IS UNIQUE")
    q(store, "CREATE VECTOR INDEX vector IF NOT EXISTS FOR (c:Chunk) ON c.embedding "
             "OPTIONS {indexConfig: {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine'}}")  # fmt: skip
    q(store, "CREATE VECTOR INDEX entity_vector IF NOT EXISTS FOR (e:__Entity__) ON e.embedding "
             "OPTIONS {indexConfig: {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine'}}")  # fmt: skip
    q(store, "CREATE FULLTEXT INDEX keyword IF NOT EXISTS FOR (n:Chunk) ON EACH [n.text]")
    for path in files:
        texts = doc_chunks(path)
        vectors = embed(texts)
        q(store, "CREATE (:Document {fileName: $f, fileSize: $size, fileType: 'txt', status: 'Completed', "
                 "model: 'openai_gpt_4o', total_chunks: $n, createdAt: datetime('2025-01-01T00:00:00Z')})",
          f=path.name, size=path.stat().st_size, n=len(texts))  # fmt: skip
        offset = 0
        prev = None
        for i, (text, v) in enumerate(zip(texts, vectors, strict=True)):
            cid = hashlib.sha1(text.encode()).hexdigest()
            q(store, "MATCH (d:Document {fileName: $f}) "
                     "CREATE (c:Chunk {id: $id, text: $body, position: $pos, length: size($body), fileName: $f, "
                     "content_offset: $offset}) CREATE (c)-[:PART_OF]->(d) "
                     "WITH c, d CALL db.create.setNodeVectorProperty(c, 'embedding', $v) "
                     "FOREACH (_ IN CASE WHEN $pos = 1 THEN [1] ELSE [] END | CREATE (d)-[:FIRST_CHUNK]->(c))",
              f=path.name, id=cid, body=text, pos=i + 1, offset=offset, v=vec(v))  # fmt: skip
            if prev is not None:
                q(store, "MATCH (a:Chunk {id: $a}), (b:Chunk {id: $b}) CREATE (a)-[:NEXT_CHUNK]->(b), "
                         "(a)-[:SIMILAR {score: 0.5}]->(b)", a=prev, b=cid)  # fmt: skip
            prev, offset = cid, offset + len(text)
            found, rels = extract(text)
            for n in found:  # langchain's add_graph_documents: MERGE on __Entity__ id, then the type label
                q(store, f"MERGE (e:__Entity__ {{id: $id}}) SET e:`{label(n)}` "
                         "WITH e MATCH (c:Chunk {id: $c}) MERGE (c)-[:HAS_ENTITY]->(e)", id=n, c=cid)  # fmt: skip
            for a, t, b in rels:
                q(store, f"MATCH (a:__Entity__ {{id: $a}}), (b:__Entity__ {{id: $b}}) MERGE (a)-[:`{t}`]->(b)",
                  a=a, b=b)  # fmt: skip
    # LLM Graph Builder's post-processing: some entities get a description and a vector (MiniLM)
    rows = q(store, "MATCH (e:__Entity__) WITH e ORDER BY e.id WITH collect(e.id) AS ids "
                    "RETURN [i IN range(0, size(ids) - 1) WHERE i % 3 = 0 | ids[i]] AS ids")[0]["ids"]  # fmt: skip
    for eid, v in zip(rows, embed([f"{i} is described by the other tool." for i in rows]), strict=True):
        q(store, "MATCH (e:__Entity__ {id: $id}) SET e.description = $id + ' is described by the other tool.' "
                 "WITH e CALL db.create.setNodeVectorProperty(e, 'embedding', $v)", id=eid, v=vec(v))  # fmt: skip


def llm_graph_builder_communities(store: Any, embed: Embed) -> None:
    """LLM Graph Builder's own community layer (its GDS post-processing): `__Community__ {id: 'level-n', level,
    title, summary, community_rank, weight, embedding}`, IN_COMMUNITY, PARENT_COMMUNITY, `community_vector`."""
    q(store, "CREATE VECTOR INDEX community_vector IF NOT EXISTS FOR (c:__Community__) ON c.embedding "
             "OPTIONS {indexConfig: {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine'}}")  # fmt: skip
    q(store, "CREATE CONSTRAINT IF NOT EXISTS FOR (c:__Community__) REQUIRE c.id IS UNIQUE")
    top = vec(embed(["The whole town"])[0])
    q(store, "CREATE (:__Community__ {id: '1-0', level: 1, title: 'The whole town', summary: 'Everything.', "
             "community_rank: 3, weight: 9}) WITH 1 AS _ MATCH (c:__Community__ {id: '1-0'}) "
             "CALL db.create.setNodeVectorProperty(c, 'embedding', $v)", v=top)  # fmt: skip
    for i, (first, v) in enumerate(zip("AMT", embed(["People A", "People M", "People T"]), strict=True)):
        q(store, "CREATE (c:__Community__ {id: $id, level: 0, title: $t, summary: $t, community_rank: 1, weight: 1}) "
                 "WITH c MATCH (p:__Community__ {id: '1-0'}) CREATE (c)-[:PARENT_COMMUNITY]->(p) "
                 "WITH c MATCH (e:__Entity__) WHERE e.id STARTS WITH $first CREATE (e)-[:IN_COMMUNITY]->(c) "
                 "WITH DISTINCT c CALL db.create.setNodeVectorProperty(c, 'embedding', $v)",
          id=f"0-{i}", t=f"Entities starting with {first}", first=first, v=vec(v))  # fmt: skip


def neo4j_graphrag_shape(store: Any, embed: Embed, files: Sequence[Path], run: str = "r1") -> None:
    """neo4j-graphrag KG builder's shape as its Neo4jWriter leaves it: every node __KGBuilder__; Document
    {path, createdAt}; Chunk {text, index, embedding} -FROM_DOCUMENT-> Document, NEXT_CHUNK; entities
    (:Label:__Entity__:__KGBuilder__ {name}) -FROM_CHUNK-> Chunk; typed relations; no `id` anywhere."""
    for path in files:
        texts = doc_chunks(path)
        vectors = embed(texts)
        q(store, "CREATE (:Document:__KGBuilder__ {path: $p, createdAt: '2025-01-01T00:00:00+00:00'})", p=str(path))
        prev = None
        for i, (text, v) in enumerate(zip(texts, vectors, strict=True)):
            key = f"{run}:{path.name}:{i}"
            q(store, "MATCH (d:Document {path: $p}) CREATE (c:Chunk:__KGBuilder__ {text: $body, index: $i, "
                     "__key: $key}) CREATE (c)-[:FROM_DOCUMENT]->(d) "
                     "WITH c CALL db.create.setNodeVectorProperty(c, 'embedding', $v)",
              p=str(path), body=text, i=i, key=key, v=vec(v))  # fmt: skip
            if prev is not None:
                q(store, "MATCH (a:Chunk {__key: $a}), (b:Chunk {__key: $b}) CREATE (a)-[:NEXT_CHUNK]->(b)",
                  a=prev, b=key)  # fmt: skip
            prev = key
            found, rels = extract(text)
            for n in found:  # no entity resolution: one node per name and chunk, as the writer creates them
                q(store, f"MATCH (c:Chunk {{__key: $c}}) CREATE (e:__KGBuilder__:__Entity__:`{label(n)}` "
                         "{name: $n, __key: $c + '/' + $n}) CREATE (e)-[:FROM_CHUNK]->(c)", n=n, c=key)  # fmt: skip
            for a, t, b in rels:
                q(store, f"MATCH (a:__Entity__ {{__key: $a}}), (b:__Entity__ {{__key: $b}}) CREATE (a)-[:`{t}`]->(b)",
                  a=f"{key}/{a}", b=f"{key}/{b}")  # fmt: skip
    q(store, "MATCH (n:__KGBuilder__) WHERE n.__key IS NOT NULL REMOVE n.__key")


def snapshot(store: Any) -> dict[str, dict]:
    """Every node (labels, properties) and relationship (type, ends, properties) by element id."""
    nodes = {r["id"]: (set(r["labels"]), r["props"]) for r in q(
        store, "MATCH (n) RETURN elementId(n) AS id, labels(n) AS labels, properties(n) AS props")}  # fmt: skip
    rels = {r["id"]: (r["type"], r["s"], r["t"], r["props"]) for r in q(
        store, "MATCH (s)-[r]->(t) RETURN elementId(r) AS id, type(r) AS type, elementId(s) AS s, "
               "elementId(t) AS t, properties(r) AS props")}  # fmt: skip
    return {"nodes": nodes, "rels": rels}


def assert_kept(before: dict[str, dict], after: dict[str, dict]) -> None:
    """Every node and relationship of ``before`` is still there with its labels and every property unchanged."""
    for eid, (labels, props) in before["nodes"].items():
        assert eid in after["nodes"], f"node {eid} {labels} was deleted"
        now_labels, now = after["nodes"][eid]
        assert labels <= now_labels, f"node {eid} lost labels {labels - now_labels}"
        changed = {k for k, v in props.items() if now.get(k) != v}
        assert not changed, f"node {eid} {labels}: properties changed {sorted(changed)}"
    for rid, (rtype, s, t, props) in before["rels"].items():
        assert rid in after["rels"], f"relationship {rid} {rtype} was deleted"
        assert after["rels"][rid][:3] == (rtype, s, t)
        assert after["rels"][rid][3] == props, f"relationship {rid} {rtype}: properties changed"


OURS_NODE = {"DriftgraphMeta", "Retrieval", "DriftStep"}
OURS_REL = {"IN_COMMUNITY", "PARENT", "INCLUDED", "DROPPED", "STEP", "FOLLOW_UP"}


def foreign(snap: dict[str, dict]) -> dict[str, dict]:
    """A snapshot taken after an adopt, minus what driftgraph wrote (which a re-run may update)."""
    nodes = {}
    for eid, (labels, props) in snap["nodes"].items():
        if labels & OURS_NODE or ("__Community__" in labels and "community_title" in props):
            continue
        owned = set(props.get("driftgraph_props") or []) | {"driftgraph_props"}
        nodes[eid] = (labels - {"__DriftgraphChunk__", "__DriftgraphEntity__"},
                      {k: v for k, v in props.items() if k not in owned})  # fmt: skip
    rels = {
        rid: r for rid, r in snap["rels"].items()
        if r[0] not in OURS_REL and not (r[0] == "RELATED" and str(r[3].get("id", "")).startswith("adopt:"))
    }  # fmt: skip
    return {"nodes": nodes, "rels": rels}


# -- neo4j-graphrag's own KG builder components --------------------------------------------------------------
_ER_INPUT = re.compile(r"Input text:\s*\n(.*)\Z", re.S)


def is_er_request(req: dict[str, Any]) -> bool:
    content = req["messages"][-1]["content"]
    return "extracting\ninformation in structured formats to build a knowledge graph" in content


def er_reply(req: dict[str, Any]) -> str:
    """neo4j-graphrag's ERExtractionTemplate answered the way the fake extraction model answers ours."""
    import json

    m = _ER_INPUT.search(req["messages"][-1]["content"])
    found, rels = extract(m.group(1).strip() if m else "")
    ids = {n: str(i) for i, n in enumerate(found)}
    return json.dumps({
        "nodes": [{"id": ids[n], "label": label(n), "properties": {"name": n}} for n in found],
        "relationships": [{"type": t, "start_node_id": ids[a], "end_node_id": ids[b], "properties": {}}
                          for a, t, b in rels],
    })  # fmt: skip


def neo4j_graphrag_pipeline(driver: Any, embed: Embed, base_url: str, files: Sequence[Path]) -> list[Any]:
    """examples/docs through neo4j-graphrag's FixedSizeSplitter, TextChunkEmbedder, LLMEntityRelationExtractor
    (its lexical graph made by LexicalGraphBuilder) and Neo4jWriter, the LLM being the fake server."""
    import asyncio

    from neo4j_graphrag.components.embedder import TextChunkEmbedder
    from neo4j_graphrag.components.entity_relation_extractor import LLMEntityRelationExtractor
    from neo4j_graphrag.components.kg_writer import Neo4jWriter
    from neo4j_graphrag.components.text_splitters.fixed_size_splitter import FixedSizeSplitter
    from neo4j_graphrag.components.types import DocumentInfo
    from neo4j_graphrag.embeddings.base import Embedder
    from neo4j_graphrag.llm import OpenAILLM

    class Same(Embedder):
        def embed_query(self, text: str) -> list[float]:
            return vec(embed([text])[0])

    llm = OpenAILLM(model_name="fake-model", base_url=base_url, api_key="test")
    splitter = FixedSizeSplitter(chunk_size=400, chunk_overlap=0, approximate=True)
    chunk_embedder = TextChunkEmbedder(embedder=Same())
    extractor = LLMEntityRelationExtractor(llm=llm)
    writer = Neo4jWriter(driver)

    async def one(path: Path) -> Any:
        chunks = await chunk_embedder.run(await splitter.run(path.read_text(encoding="utf-8")))
        graph = await extractor.run(chunks, document_info=DocumentInfo(path=str(path)))
        return await writer.run(graph)

    return [asyncio.run(one(p)) for p in files]
