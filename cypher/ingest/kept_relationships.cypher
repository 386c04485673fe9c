// Relationships the given chunks contributed in an earlier run (see kept_entities.cypher). Param: $chunk_ids.
MATCH (s:__Entity__)-[r:RELATED]->(t:__Entity__)
WHERE any(chunk_id IN coalesce(r.text_unit_ids, []) WHERE chunk_id IN $chunk_ids)
RETURN r.id AS id, s.id AS source_id, t.id AS target_id, s.title AS source, t.title AS target,
       r.description AS description, r.weight AS weight,
       [chunk_id IN r.text_unit_ids WHERE chunk_id IN $chunk_ids] AS chunk_ids
ORDER BY id
