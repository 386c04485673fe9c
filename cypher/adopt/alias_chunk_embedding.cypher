CREATE VECTOR INDEX chunk_embedding IF NOT EXISTS FOR (n:__DriftgraphChunk__) ON n.embedding
OPTIONS {indexConfig: {`vector.dimensions`: $dimensions, `vector.similarity_function`: 'cosine'}};
