// How many nodes of each kind still need an embedding (for progress totals).
CALL () { MATCH (n:__Entity__) WHERE n.embedding IS NULL RETURN count(n) AS entity }
CALL () { MATCH (n:Chunk) WHERE n.embedding IS NULL RETURN count(n) AS chunk }
CALL () { MATCH (n:__Community__) WHERE n.embedding IS NULL AND n.full_content IS NOT NULL RETURN count(n) AS community }
RETURN entity, chunk, community
