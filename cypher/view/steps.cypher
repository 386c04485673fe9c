// The DRIFT step tree of one retrieval for the HTML page (no rows for other modes): every step with its
// parent step id, score, status and how many items its local search included; answers cut at $max_text
// characters, at most $max_steps steps, parents before children.
MATCH (r:Retrieval {id: $id})-[:STEP]->(s:DriftStep)
OPTIONAL MATCH (p:DriftStep)-[:FOLLOW_UP]->(s)
RETURN s.step_id AS id, p.step_id AS parent, s.query AS query, s.depth AS depth, s.score AS score,
       s.status AS status, s.kind AS kind, s.epoch AS epoch, s.error AS error,
       left(coalesce(s.answer, ''), $max_text) AS answer,
       COUNT { (s)-[:INCLUDED]->() } AS included
ORDER BY s.depth, coalesce(s.epoch, 1000000000), s.step_id
LIMIT $max_steps
