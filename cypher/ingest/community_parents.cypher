// (:__Community__)-[:PARENT]->(:__Community__) child -> parent. Row: {id} of a child community.
// Returns how many of the rows had a parent number that names no community.
UNWIND $rows AS row
MATCH (c:__Community__ {id: row.id})
WHERE c.parent IS NOT NULL AND c.parent >= 0
OPTIONAL MATCH (p:__Community__ {community: c.parent})
CALL (c, p) {
  WITH c, p WHERE p IS NOT NULL
  MERGE (c)-[:PARENT]->(p)
}
RETURN count(c) AS children, count(c) - count(p) AS missing
