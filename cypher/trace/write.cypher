// One retrieval trace in one round trip: the Retrieval node, then INCLUDED/DROPPED edges per item label.
// $retrieval: map of scalar properties; $chunks/$entities/$reports/$claims/$relationships: lists of
// {id, status: 'included'|'dropped', source, rank, tokens, reason, hop}, one row per (status, source, id).
// Relationship items point at the relationship's start node and carry the relationship id in item_id. The
// relationship is found by its id alone (an index seek on the related_id constraint) and its start node read
// from it: expanding from an entity instead walks that entity's relationship chain while other traces are adding
// edges to it, and under read-committed isolation such a walk missed relationships (measured: 2 traces in 10
// runs of tests/test_trace_concurrency.py on a database without the schema lost 7-9 relationship edges).
// The edges are CREATEd, not MERGEd: MERGE takes an exclusive lock on each item node as it goes, in row order,
// and the planner runs every row through the first FOREACH (included) before the second (dropped) and one
// subquery after another, so two traces sharing chunks or entities locked them in crossing orders and Neo4j
// aborted one as a deadlock. CREATE locks nothing exclusively until commit, where Neo4j takes its locks in
// node-id order. Idempotent all the same: the node is MERGEd on its id and the edges are written only while it
// has none (a repeated write of the same id updates the properties and adds no edge).
MERGE (r:Retrieval {id: $retrieval.id})
WITH r, NOT EXISTS { (r)-[:INCLUDED|DROPPED]->() } AS fresh
SET r += $retrieval, r.created_at = datetime($retrieval.created_at)
WITH r, fresh
CALL (r, fresh) {
  WITH r WHERE fresh
  UNWIND $chunks AS row
  MATCH (x:Chunk {id: row.id})
  FOREACH (_ IN CASE WHEN row.status = 'included' THEN [1] ELSE [] END |
    CREATE (r)-[:INCLUDED {source: row.source, item_id: row.id, rank: row.rank, tokens: row.tokens, hop: row.hop}]->(x))
  FOREACH (_ IN CASE WHEN row.status = 'dropped' THEN [1] ELSE [] END |
    CREATE (r)-[:DROPPED {source: row.source, item_id: row.id, reason: row.reason, rank: row.rank, hop: row.hop}]->(x))
  RETURN count(*) AS chunk_rows
}
CALL (r, fresh) {
  WITH r WHERE fresh
  UNWIND $entities AS row
  MATCH (x:__Entity__ {id: row.id})
  FOREACH (_ IN CASE WHEN row.status = 'included' THEN [1] ELSE [] END |
    CREATE (r)-[:INCLUDED {source: row.source, item_id: row.id, rank: row.rank, tokens: row.tokens, hop: row.hop}]->(x))
  FOREACH (_ IN CASE WHEN row.status = 'dropped' THEN [1] ELSE [] END |
    CREATE (r)-[:DROPPED {source: row.source, item_id: row.id, reason: row.reason, rank: row.rank, hop: row.hop}]->(x))
  RETURN count(*) AS entity_rows
}
CALL (r, fresh) {
  WITH r WHERE fresh
  UNWIND $reports AS row
  MATCH (x:__Community__ {id: row.id})
  FOREACH (_ IN CASE WHEN row.status = 'included' THEN [1] ELSE [] END |
    CREATE (r)-[:INCLUDED {source: row.source, item_id: row.id, rank: row.rank, tokens: row.tokens, hop: row.hop}]->(x))
  FOREACH (_ IN CASE WHEN row.status = 'dropped' THEN [1] ELSE [] END |
    CREATE (r)-[:DROPPED {source: row.source, item_id: row.id, reason: row.reason, rank: row.rank, hop: row.hop}]->(x))
  RETURN count(*) AS report_rows
}
CALL (r, fresh) {
  WITH r WHERE fresh
  UNWIND $claims AS row
  MATCH (x:Claim {id: row.id})
  FOREACH (_ IN CASE WHEN row.status = 'included' THEN [1] ELSE [] END |
    CREATE (r)-[:INCLUDED {source: row.source, item_id: row.id, rank: row.rank, tokens: row.tokens, hop: row.hop}]->(x))
  FOREACH (_ IN CASE WHEN row.status = 'dropped' THEN [1] ELSE [] END |
    CREATE (r)-[:DROPPED {source: row.source, item_id: row.id, reason: row.reason, rank: row.rank, hop: row.hop}]->(x))
  RETURN count(*) AS claim_rows
}
CALL (r, fresh) {
  WITH r WHERE fresh
  UNWIND $relationships AS row
  MATCH ()-[rel:RELATED {id: row.id}]->()
  WITH r, row, startNode(rel) AS x
  FOREACH (_ IN CASE WHEN row.status = 'included' THEN [1] ELSE [] END |
    CREATE (r)-[:INCLUDED {source: row.source, item_id: row.id, rank: row.rank, tokens: row.tokens, hop: row.hop}]->(x))
  FOREACH (_ IN CASE WHEN row.status = 'dropped' THEN [1] ELSE [] END |
    CREATE (r)-[:DROPPED {source: row.source, item_id: row.id, reason: row.reason, rank: row.rank, hop: row.hop}]->(x))
  RETURN count(*) AS relationship_rows
}
RETURN r.id AS id, fresh AS linked, chunk_rows + entity_rows + report_rows + claim_rows + relationship_rows AS item_rows
