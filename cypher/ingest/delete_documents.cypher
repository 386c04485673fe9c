// Remove documents by id with their chunks and those chunks' claims. Row: {id}. Entities stay.
UNWIND $rows AS row
MATCH (d:Document {id: row.id})
OPTIONAL MATCH (d)<-[:PART_OF]-(c:Chunk)
OPTIONAL MATCH (c)<-[:FOUND_IN]-(cl:Claim)
DETACH DELETE cl, c, d
RETURN count(DISTINCT d) AS written
