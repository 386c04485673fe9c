// Drop the outgoing PARENT links of these communities before they are linked again. Row: {id}.
UNWIND $rows AS row
MATCH (c:__Community__ {id: row.id})-[p:PARENT]->()
DELETE p
RETURN count(p) AS written
