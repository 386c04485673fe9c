// The other tool's typed relations between entities (driftgraph's own RELATED, SYN and links left out).
MATCH (s:__Entity__)-[r]->(t:__Entity__)
WHERE s <> t AND NOT type(r) IN ['IN_COMMUNITY', 'HAS_ENTITY', 'FROM_CHUNK', 'SYN']
  AND NOT (type(r) = 'RELATED' AND coalesce(r.id, '') STARTS WITH 'adopt:')
RETURN s.id AS source_id, t.id AS target_id, type(r) AS type, r.description AS description, r.weight AS weight
ORDER BY source_id, target_id, type
