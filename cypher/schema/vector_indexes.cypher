CREATE VECTOR INDEX entity_embedding IF NOT EXISTS FOR (n:__Entity__) ON n.embedding
OPTIONS {indexConfig: {`vector.dimensions`: $dimensions, `vector.similarity_function`: 'cosine',
                       `vector.hnsw.m`: $m, `vector.hnsw.ef_construction`: $ef_construction}};
CREATE VECTOR INDEX chunk_embedding IF NOT EXISTS FOR (n:Chunk) ON n.embedding
OPTIONS {indexConfig: {`vector.dimensions`: $dimensions, `vector.similarity_function`: 'cosine',
                       `vector.hnsw.m`: $m, `vector.hnsw.ef_construction`: $ef_construction}};
CREATE VECTOR INDEX community_embedding IF NOT EXISTS FOR (n:__Community__) ON n.embedding
OPTIONS {indexConfig: {`vector.dimensions`: $dimensions, `vector.similarity_function`: 'cosine',
                       `vector.hnsw.m`: $m, `vector.hnsw.ef_construction`: $ef_construction}};
