// Community reports of one hierarchy cut: every community at $level, plus shallower communities without
// children (leaves above the cut), so the cut covers the whole graph once. Rows in id order; `n_tokens` is
// the report's full_content tokens, computed at write time.
MATCH (c:__Community__)
WHERE c.level = $level
   OR (c.level < $level AND NOT EXISTS { MATCH (:__Community__)-[:PARENT]->(c) })
RETURN c.id AS id, c.community AS community, c.level AS level, c.title AS title, c.rank AS rank,
       c.summary AS summary, c.full_content AS full_content, c.n_tokens AS n_tokens,
       COUNT { (:__Community__)-[:PARENT]->(c) } AS children
ORDER BY c.id
