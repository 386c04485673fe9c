// One batch of relationships between existing entities. Row: {id, source_id, target_id, description, weight,
// combined_degree, n_tokens, text_unit_ids, human_readable_id}. Rows whose endpoints are missing are skipped
// (the returned count says how many were written).
UNWIND $rows AS row
MATCH (s:__Entity__ {id: row.source_id})
MATCH (t:__Entity__ {id: row.target_id})
MERGE (s)-[r:RELATED {id: row.id}]->(t)
SET r.description = row.description,
    r.weight = row.weight,
    r.combined_degree = row.combined_degree,
    r.n_tokens = row.n_tokens,
    r.text_unit_ids = row.text_unit_ids,
    r.human_readable_id = row.human_readable_id
RETURN count(r) AS written
