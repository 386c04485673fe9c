// neo4j-graphrag's (:Chunk)-[:FROM_DOCUMENT]->(:Document) gets driftgraph's PART_OF next to it.
MATCH (c:Chunk)-[:FROM_DOCUMENT]->(d:Document)
WHERE NOT (c)-[:PART_OF]->(d)
CREATE (c)-[:PART_OF]->(d)
RETURN count(*) AS written
