"""Importers: Microsoft GraphRAG parquet output <-> the Neo4j graph model (DESIGN §3)."""
