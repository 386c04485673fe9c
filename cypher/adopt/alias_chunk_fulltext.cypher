CREATE FULLTEXT INDEX chunk_fulltext IF NOT EXISTS FOR (n:__DriftgraphChunk__) ON EACH [n.text];
