// Remove communities by id with their IN_COMMUNITY and PARENT links. Row: {id}.
UNWIND $rows AS row
MATCH (c:__Community__ {id: row.id})
DETACH DELETE c
RETURN count(c) AS written
