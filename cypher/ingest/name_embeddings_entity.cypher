// Store name vectors on __Entity__ nodes (float32 via the procedure). Row: {id, embedding}. No vector index
// reads them: synonyms are found by comparing all names at once in numpy (driftgraph/store/synonyms.py).
UNWIND $rows AS row
MATCH (n:__Entity__ {id: row.id})
CALL db.create.setNodeVectorProperty(n, 'name_embedding', row.embedding)
RETURN count(n) AS written
