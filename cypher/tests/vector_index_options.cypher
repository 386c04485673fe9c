// Test support: the HNSW settings a vector index was created with.
SHOW INDEXES YIELD name, options
WHERE name = $index
RETURN options.indexConfig.`vector.hnsw.m` AS m, options.indexConfig.`vector.hnsw.ef_construction` AS ef_construction
