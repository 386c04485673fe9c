// Entities the given chunks contributed in an earlier run, for chunks whose extraction failed this run
// (driftgraph/index/keep.py keeps them until an extraction of the chunk succeeds). Param: $chunk_ids.
MATCH (c:Chunk)-[:HAS_ENTITY]->(e:__Entity__)
WHERE c.id IN $chunk_ids
RETURN c.id AS chunk_id, e.id AS id, e.title AS title, e.type AS type, e.description AS description
ORDER BY chunk_id, id
