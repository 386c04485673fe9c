// Synonym edges for one batch of entities, and the mark that their synonyms are found, in one transaction
// (driftgraph/store/synonyms.py). $pairs: {a, b, similarity} with a < b, so a pair found from both sides
// is one edge; MERGE makes a re-run write nothing new. $ids: the batch's entities; $min_similarity marks
// them (a changed threshold makes every entity pending again); an adopted graph's node lists the mark in
// `driftgraph_props`.
CALL () {
  UNWIND $pairs AS p
  MATCH (a:__Entity__ {id: p.a}), (b:__Entity__ {id: p.b})
  MERGE (a)-[r:SYN]->(b)
  SET r.similarity = p.similarity
  RETURN count(r) AS linked
}
CALL () {
  UNWIND $ids AS id
  MATCH (n:__Entity__ {id: id})
  SET n.synonyms_at = $min_similarity,
      n.driftgraph_props = CASE WHEN n.driftgraph_props IS NULL OR 'synonyms_at' IN n.driftgraph_props
        THEN n.driftgraph_props  // kept sorted, as adopt writes it
        ELSE [p IN n.driftgraph_props WHERE p < 'synonyms_at'] + 'synonyms_at'
             + [p IN n.driftgraph_props WHERE p > 'synonyms_at'] END
  RETURN count(n) AS marked
}
RETURN linked, marked
