// Claims the given chunks contributed in an earlier run (see kept_entities.cypher). Param: $chunk_ids.
MATCH (cl:Claim)
WHERE cl.text_unit_id IN $chunk_ids
OPTIONAL MATCH (cl)-[:ABOUT]->(e:__Entity__)
RETURN cl.id AS id, cl.text_unit_id AS chunk_id, e.id AS subject_id, cl.subject AS subject, cl.object AS object,
       cl.type AS type, cl.status AS status, cl.start_date AS start_date, cl.end_date AS end_date,
       cl.description AS description, cl.source_text AS source_text
ORDER BY id
