// NEXT_CHUNK links in position order within each document. Row: {id} of a Document.
UNWIND $rows AS row
MATCH (d:Document {id: row.id})<-[:PART_OF]-(c:Chunk)
WITH d, c ORDER BY c.position, c.id
WITH d, collect(c) AS chunks
CALL (chunks) {
  UNWIND range(0, size(chunks) - 2) AS i
  WITH chunks[i] AS a, chunks[i + 1] AS b
  MERGE (a)-[:NEXT_CHUNK]->(b)
}
RETURN count(d) AS written
