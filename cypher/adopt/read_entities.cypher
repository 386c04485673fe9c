// Every entity with its naming properties, labels, the chunks that mention it and the size of its vector.
MATCH (e:__Entity__)
RETURN elementId(e) AS eid, e.id AS id, keys(e) AS keys, labels(e) AS labels, e.driftgraph_props AS owned,
       e.title AS title, e.name AS name, e.type AS type, e.description AS description,
       e.driftgraph_described_from AS described_from, size(e.embedding) AS dims,
       [(c:Chunk)-[:HAS_ENTITY]->(e) | c.id] AS chunk_ids
ORDER BY e.id
