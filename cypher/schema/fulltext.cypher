CREATE FULLTEXT INDEX entity_fulltext IF NOT EXISTS FOR (n:__Entity__) ON EACH [n.title, n.description];
CREATE FULLTEXT INDEX chunk_fulltext IF NOT EXISTS FOR (n:Chunk) ON EACH [n.text];
