// What the synonym step has to do (driftgraph/store/synonyms.py): entities, names still to embed, named
// entities not linked at $min_similarity yet, entities marked at another threshold (every edge is rebuilt),
// SYN edges.
CALL () { MATCH (n:__Entity__) RETURN count(n) AS entities }
CALL () {
  MATCH (n:__Entity__) WHERE n.name_embedding IS NULL AND trim(coalesce(n.title, '')) <> ''
  RETURN count(n) AS unembedded
}
CALL () {
  MATCH (n:__Entity__)
  WHERE trim(coalesce(n.title, '')) <> '' AND (n.synonyms_at IS NULL OR n.synonyms_at <> $min_similarity)
  RETURN count(n) AS unlinked
}
CALL () {
  MATCH (n:__Entity__) WHERE n.synonyms_at IS NOT NULL AND n.synonyms_at <> $min_similarity
  RETURN count(n) AS stale
}
CALL () { MATCH (:__Entity__)-[r:SYN]->(:__Entity__) RETURN count(r) AS edges }
RETURN entities, unembedded, unlinked, stale, edges
