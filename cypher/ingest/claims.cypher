// One batch of claims (GraphRAG covariates). Row: {id, human_readable_id, covariate_type, type, description,
// status, start_date, end_date, source_text, subject, object, subject_entity_id, text_unit_id}.
// (:Claim)-[:ABOUT]->(subject entity), (:Claim)-[:FOUND_IN]->(:Chunk) when those exist.
UNWIND $rows AS row
MERGE (cl:Claim {id: row.id})
SET cl.covariate_type = row.covariate_type,
    cl.type = row.type,
    cl.description = row.description,
    cl.status = row.status,
    cl.start_date = row.start_date,
    cl.end_date = row.end_date,
    cl.source_text = row.source_text,
    cl.subject = row.subject,
    cl.object = row.object,
    cl.text_unit_id = row.text_unit_id,
    cl.human_readable_id = row.human_readable_id
WITH cl, row
CALL (cl, row) {
  MATCH (e:__Entity__ {id: row.subject_entity_id})
  MERGE (cl)-[:ABOUT]->(e)
}
CALL (cl, row) {
  MATCH (c:Chunk {id: row.text_unit_id})
  MERGE (cl)-[:FOUND_IN]->(c)
}
RETURN count(cl) AS written
