// Block until every index is ONLINE, at most $timeout seconds (Neo4j raises when the wait times out).
CALL db.awaitIndexes($timeout)
