// Root communities (no parent): where dynamic global search starts. `descendants` counts the subtree a
// low rating prunes, so the trace can say how much was never read.
MATCH (c:__Community__)
WHERE NOT EXISTS { MATCH (c)-[:PARENT]->(:__Community__) }
RETURN c.id AS id, c.community AS community, c.level AS level, c.title AS title, c.rank AS rank,
       c.summary AS summary, c.full_content AS full_content, c.n_tokens AS n_tokens,
       COUNT { (:__Community__)-[:PARENT]->(c) } AS children,
       COUNT { (:__Community__)-[:PARENT*]->(c) } AS descendants
ORDER BY c.id
