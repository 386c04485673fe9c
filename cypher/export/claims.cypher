// One page of claims in id order.
MATCH (cl:Claim)
WHERE cl.id > $after
WITH cl ORDER BY cl.id LIMIT $limit
RETURN cl.id AS id, cl.human_readable_id AS human_readable_id, cl.covariate_type AS covariate_type,
       cl.type AS type, cl.description AS description, cl.subject AS subject_id, cl.object AS object_id,
       cl.status AS status, cl.start_date AS start_date, cl.end_date AS end_date, cl.source_text AS source_text,
       coalesce(cl.text_unit_id, COLLECT { MATCH (cl)-[:FOUND_IN]->(c:Chunk) RETURN c.id }[0]) AS text_unit_id
