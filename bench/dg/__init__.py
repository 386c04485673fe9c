"""driftgraph's side of the bench: scripts run in the project's virtualenv against a Neo4j (``--uri``)."""
