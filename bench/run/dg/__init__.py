"""driftgraph's side of the bench: parts run in the project's virtualenv, most against a Neo4j (``--uri``)."""
