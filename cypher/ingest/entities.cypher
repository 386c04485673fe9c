// One batch of entities. Row: {id, title, type, description, degree, frequency, n_tokens, human_readable_id,
// text_unit_ids}. (:Chunk)-[:HAS_ENTITY]->(e) for every listed chunk that exists.
// A changed title or description drops the stale embedding; a changed title also drops the name vector and
// the synonym edges (driftgraph/store/synonyms.py finds them again).
UNWIND $rows AS row
MERGE (e:__Entity__ {id: row.id})
WITH e, row,
     e.title IS NOT NULL AND (e.title <> row.title OR coalesce(e.description, '') <> coalesce(row.description, ''))
       AS changed,
     e.title IS NOT NULL AND e.title <> row.title AS renamed
SET e.title = row.title,
    e.type = row.type,
    e.description = row.description,
    e.degree = row.degree,
    e.frequency = row.frequency,
    e.n_tokens = row.n_tokens,
    e.human_readable_id = row.human_readable_id
FOREACH (_ IN CASE WHEN changed THEN [1] ELSE [] END | REMOVE e.embedding)
FOREACH (_ IN CASE WHEN renamed THEN [1] ELSE [] END | REMOVE e.name_embedding, e.synonyms_at)
WITH e, row, renamed
CALL (e, renamed) {
  MATCH (e)-[s:SYN]-(:__Entity__)
  WHERE renamed
  DELETE s
}
WITH e, row
CALL (e, row) {
  UNWIND coalesce(row.text_unit_ids, []) AS chunk_id
  MATCH (c:Chunk {id: chunk_id})
  MERGE (c)-[:HAS_ENTITY]->(e)
}
RETURN count(e) AS written
