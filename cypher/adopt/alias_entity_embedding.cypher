CREATE VECTOR INDEX entity_embedding IF NOT EXISTS FOR (n:__DriftgraphEntity__) ON n.embedding
OPTIONS {indexConfig: {`vector.dimensions`: $dimensions, `vector.similarity_function`: 'cosine'}};
