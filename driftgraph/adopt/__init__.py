"""Adopt a graph another tool built (neo4j-graphrag's KG builder, LLM Graph Builder): driftgraph's model is
filled next to it (labels, properties and relationships only added), then communities, reports, embeddings.

detect.py (which tool) -> map.py (ids, links, chunk and document properties, indexes) -> graph.py (entities,
descriptions, RELATED) -> run.py (the indexer's community, report and embedding stages).
"""
