UNWIND $rows AS row
MERGE (e:__Entity__ {id: row.id})
SET e.title = row.title, e.description = row.description, e.embedding = row.embedding
