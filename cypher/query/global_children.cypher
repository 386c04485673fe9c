// The child communities of $ids (one level down), with the parent they were reached from.
UNWIND $ids AS parent_id
MATCH (c:__Community__)-[:PARENT]->(:__Community__ {id: parent_id})
RETURN parent_id AS parent, c.id AS id, c.community AS community, c.level AS level, c.title AS title,
       c.rank AS rank, c.summary AS summary, c.full_content AS full_content, c.n_tokens AS n_tokens,
       COUNT { (:__Community__)-[:PARENT]->(c) } AS children,
       COUNT { (:__Community__)-[:PARENT*]->(c) } AS descendants
ORDER BY parent, id
