CREATE FULLTEXT INDEX entity_fulltext IF NOT EXISTS FOR (n:__DriftgraphEntity__) ON EACH [n.title, n.description];
