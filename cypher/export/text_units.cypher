// One page of chunks in id order with their document, entities and claims.
MATCH (c:Chunk)
WHERE c.id > $after
WITH c ORDER BY c.id LIMIT $limit
RETURN c.id AS id, c.human_readable_id AS human_readable_id, c.text AS text, c.n_tokens AS n_tokens,
       COLLECT { MATCH (c)-[:PART_OF]->(d:Document) RETURN d.id }[0] AS document_id,
       COLLECT { MATCH (c)-[:HAS_ENTITY]->(e:__Entity__) RETURN e.id ORDER BY e.human_readable_id, e.id } AS entity_ids,
       COLLECT { MATCH (c)<-[:FOUND_IN]-(cl:Claim) RETURN cl.id ORDER BY cl.human_readable_id, cl.id } AS covariate_ids
