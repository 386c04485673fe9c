// report id -> community id, to attach precomputed report embeddings (GraphRAG keys them by report id).
MATCH (c:__Community__)
WHERE c.report_id IS NOT NULL
RETURN c.report_id AS report_id, c.id AS id
