// The DRIFT step tree of a retrieval (no rows for other modes), parents before children, for JVM clients.
MATCH (r:Retrieval {id: $id})-[:STEP]->(:DriftStep)-[:FOLLOW_UP*0..]->(s:DriftStep)
WITH DISTINCT s
OPTIONAL MATCH (p:DriftStep)-[:FOLLOW_UP]->(s)
RETURN s AS step, p.id AS parent
ORDER BY s.depth, s.id
