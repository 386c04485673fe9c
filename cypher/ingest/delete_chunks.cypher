// Remove chunks by id with their claims (e.g. after a chunking change). Row: {id}.
UNWIND $rows AS row
MATCH (c:Chunk {id: row.id})
OPTIONAL MATCH (c)<-[:FOUND_IN]-(cl:Claim)
DETACH DELETE cl, c
RETURN count(DISTINCT c) AS written
