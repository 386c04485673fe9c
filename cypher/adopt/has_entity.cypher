// neo4j-graphrag's (entity)-[:FROM_CHUNK]->(chunk) gets driftgraph's (chunk)-[:HAS_ENTITY]->(entity).
MATCH (e:__Entity__)-[:FROM_CHUNK]->(c:Chunk)
WHERE NOT (c)-[:HAS_ENTITY]->(e)
CREATE (c)-[:HAS_ENTITY]->(e)
RETURN count(*) AS written
