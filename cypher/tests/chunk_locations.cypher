// The chunks of one document with their places (page, slide or heading path).
MATCH (:Document {id: $document_id})<-[:PART_OF]-(c:Chunk)
RETURN c.id AS id, c.location AS location
ORDER BY c.position
