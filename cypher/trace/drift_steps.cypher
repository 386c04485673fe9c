// The DRIFT step tree of one retrieval, in one round trip:
//   (:Retrieval)-[:STEP]->(:DriftStep)-[:FOLLOW_UP]->(:DriftStep), and each step's local retrieval as
//   (:DriftStep)-[:INCLUDED {source, item_id, rank, tokens}]->(x) for the chunks/entities/reports/claims it
//   put in its context (a relationship points at its start entity, like the Retrieval's own edges).
// $steps: [{id, step_id, parent, query, depth, score, status, answer, error, epoch, kind}] (ids are
// retrieval-scoped: "<retrieval id>:s3"); $chunks/$entities/$reports/$claims/$relationships:
// [{step, id, rank, tokens}]. Idempotent (MERGE).
MATCH (r:Retrieval {id: $retrieval_id})
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
CALL (r) {
  UNWIND $chunks AS row
  MATCH (s:DriftStep {id: row.step}), (x:Chunk {id: row.id})
  MERGE (s)-[i:INCLUDED {source: 'chunk', item_id: row.id}]->(x)
  SET i.rank = row.rank, i.tokens = row.tokens
  RETURN count(*) AS chunk_rows
}
CALL (r) {
  UNWIND $entities AS row
  MATCH (s:DriftStep {id: row.step}), (x:__Entity__ {id: row.id})
  MERGE (s)-[i:INCLUDED {source: 'entity', item_id: row.id}]->(x)
  SET i.rank = row.rank, i.tokens = row.tokens
  RETURN count(*) AS entity_rows
}
CALL (r) {
  UNWIND $reports AS row
  MATCH (s:DriftStep {id: row.step}), (x:__Community__ {id: row.id})
  MERGE (s)-[i:INCLUDED {source: 'report', item_id: row.id}]->(x)
  SET i.rank = row.rank, i.tokens = row.tokens
  RETURN count(*) AS report_rows
}
CALL (r) {
  UNWIND $claims AS row
  MATCH (s:DriftStep {id: row.step}), (x:Claim {id: row.id})
  MERGE (s)-[i:INCLUDED {source: 'claim', item_id: row.id}]->(x)
  SET i.rank = row.rank, i.tokens = row.tokens
  RETURN count(*) AS claim_rows
}
CALL (r) {
  UNWIND $relationships AS row
  MATCH (s:DriftStep {id: row.step})
  MATCH (x:__Entity__)-[:RELATED {id: row.id}]->(:__Entity__)
  MERGE (s)-[i:INCLUDED {source: 'relationship', item_id: row.id}]->(x)
  SET i.rank = row.rank, i.tokens = row.tokens
  RETURN count(*) AS relationship_rows
}
RETURN step_rows, edge_rows, chunk_rows + entity_rows + report_rows + claim_rows + relationship_rows AS item_rows
