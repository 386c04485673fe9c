// Calibration (driftgraph/store/calibration.py): each probe question's best cosine (in [-1, 1]) among the entity
// vectors and among the community report vectors. The vector indexes propose $k candidates each (their scores are
// approximate: quantised vectors); the exact cosine of those decides. One row per probe, in $vectors order; null
// where the index holds no such vector.
UNWIND range(0, size($vectors) - 1) AS i
CALL (i) {
  CALL db.index.vector.queryNodes('entity_embedding', $k, $vectors[i]) YIELD node
  RETURN max(vector.similarity.cosine(node.embedding, $vectors[i]) * 2 - 1) AS entity
}
CALL (i) {
  CALL db.index.vector.queryNodes('community_embedding', $k, $vectors[i]) YIELD node
  WHERE node.full_content IS NOT NULL
  RETURN max(vector.similarity.cosine(node.embedding, $vectors[i]) * 2 - 1) AS report
}
RETURN i, entity, report
ORDER BY i
