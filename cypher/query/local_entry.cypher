// Local search, round trip 1: entry candidates. Entity vector hits ($entity_k, oversampled by the caller),
// entity fulltext hits (only when $fulltext is not empty; a Lucene query escaped by the caller) and chunk
// vector hits ($chunk_k), community report vector hits ($report_k). Entities carry `df`, the chunks that mention
// them (the named-entity bypass applies to rare names only). Every `similarity` is the cosine in [-1, 1] (the index reports (1 + cos) / 2).
// Also reports which sources the index holds, so an index without reports or claims still answers, and the
// index's calibrated thresholds (driftgraph/store/calibration.py; null when none was measured).
CALL () {
  CALL db.index.vector.queryNodes('entity_embedding', $entity_k, $vector) YIELD node, score
  RETURN collect({id: node.id, title: node.title, similarity: 2 * score - 1,
                  df: COUNT { (node)<-[:HAS_ENTITY]-(:Chunk) }}) AS entity_vector
}
CALL () {
  UNWIND CASE WHEN $fulltext = '' THEN [] ELSE [$fulltext] END AS q
  CALL db.index.fulltext.queryNodes('entity_fulltext', q, {limit: $fulltext_k}) YIELD node, score
  RETURN collect({id: node.id, title: node.title, fulltext_score: score, df: COUNT { (node)<-[:HAS_ENTITY]-(:Chunk) },
                  similarity: vector.similarity.cosine(node.embedding, $vector) * 2 - 1}) AS entity_fulltext
}
CALL () {
  UNWIND CASE WHEN $chunk_k > 0 THEN [$chunk_k] ELSE [] END AS k
  CALL db.index.vector.queryNodes('chunk_embedding', k, $vector) YIELD node, score
  RETURN collect({id: node.id, similarity: 2 * score - 1}) AS chunk_vector
}
CALL () {
  UNWIND CASE WHEN $report_k > 0 THEN [$report_k] ELSE [] END AS k
  CALL db.index.vector.queryNodes('community_embedding', k, $vector) YIELD node, score
  WHERE node.full_content IS NOT NULL
  RETURN collect({id: node.id, title: node.title, n_tokens: node.n_tokens, similarity: 2 * score - 1}) AS report_vector
}
CALL () {
  OPTIONAL MATCH (m:DriftgraphMeta {key: 'driftgraph'})
  RETURN {min_similarity: m.min_similarity, report_min_similarity: m.report_min_similarity} AS calibrated
  LIMIT 1
}
RETURN entity_vector, report_vector, entity_fulltext, chunk_vector, COUNT { (:Chunk) } AS chunk_count, calibrated,
       {
         chunk: EXISTS { (:Chunk) },
         entity: EXISTS { (:__Entity__) },
         relationship: EXISTS { ()-[:RELATED]->() },
         report: EXISTS { (c:__Community__) WHERE c.full_content IS NOT NULL },
         claim: EXISTS { (:Claim) }
       } AS present
