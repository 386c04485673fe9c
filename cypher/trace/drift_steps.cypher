// The DRIFT step tree of one retrieval, in one round trip:
//   (:Retrieval)-[:STEP]->(:DriftStep)-[:FOLLOW_UP]->(:DriftStep), and each step's local retrieval as
//   (:DriftStep)-[:INCLUDED {source, item_id, rank, tokens}]->(x) for the chunks/entities/reports/claims it
//   put in its context (a relationship points at its start entity, like the Retrieval's own edges).
// $steps: [{id, step_id, parent, query, depth, score, status, answer, error, epoch, kind}] (ids are
// retrieval-scoped: "<retrieval id>:s3"); $chunks/$entities/$reports/$claims/$relationships:
// [{step, id, rank, tokens}], one row per (step, id). The item edges are CREATEd, not MERGEd, for the reason
// given in trace/write.cypher (MERGE locked shared item nodes in crossing orders: deadlocks); still idempotent:
// steps and their tree are MERGEd, and the item edges are written only while the retrieval has no step yet.
MATCH (r:Retrieval {id: $retrieval_id})
WITH r, NOT EXISTS { (r)-[:STEP]->() } AS fresh
CALL (r) {
  UNWIND $steps AS row
  MERGE (s:DriftStep {id: row.id})
  SET s.step_id = row.step_id, s.query = row.query, s.depth = row.depth, s.score = row.score,
      s.status = row.status, s.answer = row.answer, s.error = row.error, s.epoch = row.epoch,
      s.kind = row.kind, s.retrieval_id = r.id
  MERGE (r)-[:STEP]->(s)
  RETURN count(*) AS step_rows
}
CALL (r) {
  UNWIND [row IN $steps WHERE row.parent IS NOT NULL] AS row
  MATCH (p:DriftStep {id: row.parent}), (s:DriftStep {id: row.id})
  MERGE (p)-[:FOLLOW_UP]->(s)
  RETURN count(*) AS edge_rows
}
CALL (r, fresh) {
  WITH r WHERE fresh
  UNWIND $chunks AS row
  MATCH (s:DriftStep {id: row.step}), (x:Chunk {id: row.id})
  CREATE (s)-[:INCLUDED {source: 'chunk', item_id: row.id, rank: row.rank, tokens: row.tokens}]->(x)
  RETURN count(*) AS chunk_rows
}
CALL (r, fresh) {
  WITH r WHERE fresh
  UNWIND $entities AS row
  MATCH (s:DriftStep {id: row.step}), (x:__Entity__ {id: row.id})
  CREATE (s)-[:INCLUDED {source: 'entity', item_id: row.id, rank: row.rank, tokens: row.tokens}]->(x)
  RETURN count(*) AS entity_rows
}
CALL (r, fresh) {
  WITH r WHERE fresh
  UNWIND $reports AS row
  MATCH (s:DriftStep {id: row.step}), (x:__Community__ {id: row.id})
  CREATE (s)-[:INCLUDED {source: 'report', item_id: row.id, rank: row.rank, tokens: row.tokens}]->(x)
  RETURN count(*) AS report_rows
}
CALL (r, fresh) {
  WITH r WHERE fresh
  UNWIND $claims AS row
  MATCH (s:DriftStep {id: row.step}), (x:Claim {id: row.id})
  CREATE (s)-[:INCLUDED {source: 'claim', item_id: row.id, rank: row.rank, tokens: row.tokens}]->(x)
  RETURN count(*) AS claim_rows
}
CALL (r, fresh) {
  WITH r WHERE fresh
  UNWIND $relationships AS row
  MATCH (s:DriftStep {id: row.step})
  MATCH ()-[rel:RELATED {id: row.id}]->()
  WITH s, row, startNode(rel) AS x
  CREATE (s)-[:INCLUDED {source: 'relationship', item_id: row.id, rank: row.rank, tokens: row.tokens}]->(x)
  RETURN count(*) AS relationship_rows
}
RETURN step_rows, edge_rows, fresh AS linked, chunk_rows + entity_rows + report_rows + claim_rows + relationship_rows AS item_rows
