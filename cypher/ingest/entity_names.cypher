// Every entity with a name vector, one page in id order (keyset: ids after $after), without the vector
// (ingest/entity_name_vectors reads the ones this run did not just compute). `linked`: its synonyms were
// found at this $min_similarity already (a run that stopped half-way resumes with the rest).
MATCH (n:__Entity__)
WHERE n.id > $after AND n.name_embedding IS NOT NULL
RETURN n.id AS id, coalesce(n.synonyms_at = $min_similarity, false) AS linked
ORDER BY n.id
LIMIT $limit
