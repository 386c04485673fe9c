MERGE (m:DriftgraphMeta {key: 'driftgraph'})
ON CREATE SET m.created_at = datetime()
SET m.schema_version = $schema_version, m.embedder = $embedder, m.dimensions = $dimensions
