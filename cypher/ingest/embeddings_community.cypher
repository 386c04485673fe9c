// Store vectors on __Community__ nodes (float32 via the procedure). Row: {id, embedding}.
UNWIND $rows AS row
MATCH (n:__Community__ {id: row.id})
CALL db.create.setNodeVectorProperty(n, 'embedding', row.embedding)
RETURN count(n) AS written
