// Entities mentioned by a document's chunks and by no other document's.
MATCH (d:Document {id: $id})<-[:PART_OF]-(:Chunk)-[:HAS_ENTITY]->(e:__Entity__)
WHERE NOT EXISTS { MATCH (o:Document)<-[:PART_OF]-(:Chunk)-[:HAS_ENTITY]->(e) WHERE o.id <> $id }
RETURN collect(DISTINCT e.id) AS ids
