// One page of entities in id order with the chunks that mention them.
MATCH (e:__Entity__)
WHERE e.id > $after AND NOT coalesce(e.placeholder, false)  // placeholders did not come from entities.parquet
WITH e ORDER BY e.id LIMIT $limit
RETURN e.id AS id, e.human_readable_id AS human_readable_id, e.title AS title, e.type AS type,
       e.description AS description,
       COLLECT { MATCH (c:Chunk)-[:HAS_ENTITY]->(e) RETURN c.id ORDER BY c.human_readable_id, c.id } AS text_unit_ids,
       e.frequency AS frequency, e.degree AS degree
