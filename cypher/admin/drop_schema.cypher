DROP INDEX entity_embedding IF EXISTS;
DROP INDEX chunk_embedding IF EXISTS;
DROP INDEX community_embedding IF EXISTS;
DROP INDEX entity_fulltext IF EXISTS;
DROP INDEX chunk_fulltext IF EXISTS;
