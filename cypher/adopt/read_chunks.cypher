// Every chunk in document order with its text, position and the size of a vector it may already hold.
MATCH (c:Chunk)
OPTIONAL MATCH (c)-[:PART_OF]->(d:Document)
WITH c, min(d.id) AS document_id
RETURN elementId(c) AS eid, c.id AS id, keys(c) AS keys, c.driftgraph_props AS owned, c.text AS text,
       coalesce(c.position, c.index) AS position, document_id, size(c.embedding) AS dims
ORDER BY document_id, position, id
