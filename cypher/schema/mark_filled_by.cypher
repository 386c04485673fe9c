// Which writer filled the database ('import-graphrag' or 'index'): the indexer keeps a database in sync
// with one folder and must not treat an imported index's documents as removed files.
MATCH (m:DriftgraphMeta {key: 'driftgraph'})
SET m.filled_by = $filled_by
