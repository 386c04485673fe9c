"""Neo4j: driver and sessions, the cypher/ loader, schema bootstrap, batched writes, traces."""
