// Delete retrievals older than the cutoff, with their DRIFT steps; edges go with DETACH DELETE.
MATCH (r:Retrieval)
WHERE r.created_at < datetime($cutoff)
CALL (r) {
  OPTIONAL MATCH (r)-[:STEP]->(:DriftStep)-[:FOLLOW_UP*0..]->(s:DriftStep)
  DETACH DELETE s
  WITH DISTINCT r
  DETACH DELETE r
} IN TRANSACTIONS OF 500 ROWS
