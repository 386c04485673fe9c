// Drop HAS_ENTITY links to chunks that no longer mention the entity (e.g. after re-extraction).
// Row: {id, text_unit_ids}.
UNWIND $rows AS row
MATCH (c:Chunk)-[h:HAS_ENTITY]->(:__Entity__ {id: row.id})
WHERE NOT c.id IN row.text_unit_ids
DELETE h
RETURN count(h) AS written
