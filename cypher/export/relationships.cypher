// One page of RELATED relationships in id order, endpoints as entity titles (GraphRAG's convention) and ids
// (the exporter swaps in an entity's unique exported title).
MATCH (s:__Entity__)-[r:RELATED]->(t:__Entity__)
WHERE r.id > $after
WITH s, r, t ORDER BY r.id LIMIT $limit
RETURN r.id AS id, r.human_readable_id AS human_readable_id, s.title AS source, t.title AS target,
       s.id AS source_id, t.id AS target_id,
       r.description AS description, r.weight AS weight, r.combined_degree AS combined_degree,
       coalesce(r.text_unit_ids, []) AS text_unit_ids
