MATCH (m:DriftgraphMeta)
RETURN m.schema_version AS schema_version, m.embedder AS embedder, m.dimensions AS dimensions,
       m.created_at AS created_at, m.filled_by AS filled_by
LIMIT 1
