MATCH (m:DriftgraphMeta)
RETURN m.schema_version AS schema_version, m.embedder AS embedder, m.dimensions AS dimensions,
       m.created_at AS created_at
LIMIT 1
