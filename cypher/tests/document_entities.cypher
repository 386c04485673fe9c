// Entity titles mentioned by a document's chunks (by document title).
MATCH (d:Document {title: $title})<-[:PART_OF]-(:Chunk)-[:HAS_ENTITY]->(e:__Entity__)
RETURN collect(DISTINCT e.title) AS titles
