// Nodes the other tool linked to chunks as entities get driftgraph's entity label (labels are only added).
CALL () {
  MATCH (e)-[:FROM_CHUNK]->(:Chunk)
  WHERE NOT e:__Entity__ AND NOT e:Chunk AND NOT e:Document
  RETURN DISTINCT e
  UNION
  MATCH (:Chunk)-[:HAS_ENTITY]->(e)
  WHERE NOT e:__Entity__ AND NOT e:Chunk AND NOT e:Document
  RETURN DISTINCT e
}
SET e:__Entity__
RETURN count(e) AS written
