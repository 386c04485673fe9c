// Documents, chunks and entities without an `id` get one from their element id, recorded as driftgraph's own.
MATCH (n)
WHERE (n:Document OR n:Chunk OR n:__Entity__) AND n.id IS NULL
SET n.id = 'adopt:' + elementId(n),
    n.driftgraph_props = coalesce(n.driftgraph_props, []) + ['id']
RETURN count(n) AS written
