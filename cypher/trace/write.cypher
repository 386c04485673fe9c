// One retrieval trace in one round trip: the Retrieval node, then INCLUDED/DROPPED edges per item label.
// $retrieval: map of scalar properties; $chunks/$entities/$reports/$claims/$relationships: lists of
// {id, status: 'included'|'dropped', source, rank, tokens, reason, hop}. Relationship items point at the
// relationship's start node and carry the relationship id in item_id. Idempotent: MERGE on (source, item_id).
MERGE (r:Retrieval {id: $retrieval.id})
SET r += $retrieval, r.created_at = datetime($retrieval.created_at)
WITH r
CALL (r) {
  UNWIND $chunks AS row
  MATCH (x:Chunk {id: row.id})
  FOREACH (_ IN CASE WHEN row.status = 'included' THEN [1] ELSE [] END |
    MERGE (r)-[e:INCLUDED {source: row.source, item_id: row.id}]->(x)
    SET e.rank = row.rank, e.tokens = row.tokens, e.hop = row.hop)
  FOREACH (_ IN CASE WHEN row.status = 'dropped' THEN [1] ELSE [] END |
    MERGE (r)-[e:DROPPED {source: row.source, item_id: row.id}]->(x)
    SET e.reason = row.reason, e.rank = row.rank, e.hop = row.hop)
  RETURN count(*) AS chunk_rows
}
CALL (r) {
  UNWIND $entities AS row
  MATCH (x:__Entity__ {id: row.id})
  FOREACH (_ IN CASE WHEN row.status = 'included' THEN [1] ELSE [] END |
    MERGE (r)-[e:INCLUDED {source: row.source, item_id: row.id}]->(x)
    SET e.rank = row.rank, e.tokens = row.tokens, e.hop = row.hop)
  FOREACH (_ IN CASE WHEN row.status = 'dropped' THEN [1] ELSE [] END |
    MERGE (r)-[e:DROPPED {source: row.source, item_id: row.id}]->(x)
    SET e.reason = row.reason, e.rank = row.rank, e.hop = row.hop)
  RETURN count(*) AS entity_rows
}
CALL (r) {
  UNWIND $reports AS row
  MATCH (x:__Community__ {id: row.id})
  FOREACH (_ IN CASE WHEN row.status = 'included' THEN [1] ELSE [] END |
    MERGE (r)-[e:INCLUDED {source: row.source, item_id: row.id}]->(x)
    SET e.rank = row.rank, e.tokens = row.tokens, e.hop = row.hop)
  FOREACH (_ IN CASE WHEN row.status = 'dropped' THEN [1] ELSE [] END |
    MERGE (r)-[e:DROPPED {source: row.source, item_id: row.id}]->(x)
    SET e.reason = row.reason, e.rank = row.rank, e.hop = row.hop)
  RETURN count(*) AS report_rows
}
CALL (r) {
  UNWIND $claims AS row
  MATCH (x:Claim {id: row.id})
  FOREACH (_ IN CASE WHEN row.status = 'included' THEN [1] ELSE [] END |
    MERGE (r)-[e:INCLUDED {source: row.source, item_id: row.id}]->(x)
    SET e.rank = row.rank, e.tokens = row.tokens, e.hop = row.hop)
  FOREACH (_ IN CASE WHEN row.status = 'dropped' THEN [1] ELSE [] END |
    MERGE (r)-[e:DROPPED {source: row.source, item_id: row.id}]->(x)
    SET e.reason = row.reason, e.rank = row.rank, e.hop = row.hop)
  RETURN count(*) AS claim_rows
}
CALL (r) {
  UNWIND $relationships AS row
  MATCH (x:__Entity__)-[rel:RELATED {id: row.id}]->(:__Entity__)
  FOREACH (_ IN CASE WHEN row.status = 'included' THEN [1] ELSE [] END |
    MERGE (r)-[e:INCLUDED {source: row.source, item_id: row.id}]->(x)
    SET e.rank = row.rank, e.tokens = row.tokens, e.hop = row.hop)
  FOREACH (_ IN CASE WHEN row.status = 'dropped' THEN [1] ELSE [] END |
    MERGE (r)-[e:DROPPED {source: row.source, item_id: row.id}]->(x)
    SET e.reason = row.reason, e.rank = row.rank, e.hop = row.hop)
  RETURN count(*) AS relationship_rows
}
RETURN r.id AS id, chunk_rows + entity_rows + report_rows + claim_rows + relationship_rows AS rows
