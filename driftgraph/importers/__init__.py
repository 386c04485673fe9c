"""Importers: Microsoft GraphRAG parquet output <-> the Neo4j graph model (README "Importing an existing GraphRAG
index")."""
