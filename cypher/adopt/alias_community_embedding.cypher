CREATE VECTOR INDEX community_embedding IF NOT EXISTS FOR (n:__DriftgraphCommunity__) ON n.embedding
OPTIONS {indexConfig: {`vector.dimensions`: $dimensions, `vector.similarity_function`: 'cosine'}};
