"""driftgraph: GraphRAG on Neo4j with a control plane."""

__version__ = "0.1.0"
