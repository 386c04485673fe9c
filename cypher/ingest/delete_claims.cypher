// Remove claims by id with their links. Row: {id}.
UNWIND $rows AS row
MATCH (cl:Claim {id: row.id})
DETACH DELETE cl
RETURN count(cl) AS written
