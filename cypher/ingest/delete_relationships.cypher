// Remove RELATED relationships by id. Row: {id}.
UNWIND $rows AS row
MATCH ()-[r:RELATED {id: row.id}]->()
DELETE r
RETURN count(r) AS written
