// One batch of text units. Row: {id, text, n_tokens, document_id, position, human_readable_id, location,
// keep_location}. location: where the chunk came from ("pages 3-4", "slide 2", "Operations > Storm recovery"),
// null if it has none; keep_location: its document's places are not known (stored before they were kept), so a
// stored chunk keeps the location it has.
// A changed text drops the stale embedding so the embed phase recomputes it.
UNWIND $rows AS row
MERGE (c:Chunk {id: row.id})
WITH c, row, c.text IS NOT NULL AND c.text <> row.text AS changed
SET c.text = row.text,
    c.n_tokens = row.n_tokens,
    c.position = row.position,
    c.location = CASE WHEN row.keep_location THEN c.location ELSE row.location END,
    c.human_readable_id = row.human_readable_id
FOREACH (_ IN CASE WHEN changed THEN [1] ELSE [] END | REMOVE c.embedding)
WITH c, row
CALL (c, row) {
  MATCH (d:Document {id: row.document_id})
  MERGE (c)-[:PART_OF]->(d)
}
RETURN count(c) AS written
