// The DRIFT step tree of a retrieval (no rows for other modes), parents before children, each step with the
// items its local search included (written by trace/drift_steps); for JVM clients.
MATCH (r:Retrieval {id: $id})-[:STEP]->(:DriftStep)-[:FOLLOW_UP*0..]->(s:DriftStep)
WITH DISTINCT s
OPTIONAL MATCH (p:DriftStep)-[:FOLLOW_UP]->(s)
RETURN s AS step, p.id AS parent,
       COLLECT {
         MATCH (s)-[i:INCLUDED]->(x)
         RETURN {source: i.source, id: i.item_id, rank: i.rank, tokens: i.tokens}
         ORDER BY i.source, i.rank, i.item_id
       } AS included
ORDER BY s.depth, s.epoch, s.id
