// Store vectors on Chunk nodes (float32 via the procedure). Row: {id, embedding}.
UNWIND $rows AS row
MATCH (n:Chunk {id: row.id})
CALL db.create.setNodeVectorProperty(n, 'embedding', row.embedding)
RETURN count(n) AS written
