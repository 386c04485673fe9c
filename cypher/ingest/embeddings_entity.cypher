// Store vectors on __Entity__ nodes (float32 via the procedure). Row: {id, embedding}.
UNWIND $rows AS row
MATCH (n:__Entity__ {id: row.id})
CALL db.create.setNodeVectorProperty(n, 'embedding', row.embedding)
RETURN count(n) AS written
