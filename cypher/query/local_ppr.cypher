// Local search, round trip 3 when local.ranking is 'ppr' (driftgraph/query/local/ppr.py): the entity-chunk-
// relationship neighbourhood that personalized PageRank runs on. Parameters:
//   $vector        the query embedding
//   $chunk_ids     every chunk candidate of the expansion (their mentions are returned)
//   $frontier_ids  the best of them: their entities' other chunks are fetched (one hop further)
//   $exclude_ids   entities never walked through (also $exclude_titles, lower-case)
//   $max_df        entities mentioned in more chunks than this are left out of the graph
//   $per_entity    new chunks taken per (frontier chunk, entity), most query-similar first
// `mentions` covers the known and the new chunks; `relations` are RELATED edges between mentioned entities
// (each once). Similarities are cosines in [-1, 1]. Lists come back unordered; the caller builds the graph.
CALL () {
  UNWIND $frontier_ids AS fid
  MATCH (f:Chunk {id: fid})-[:HAS_ENTITY]->(e:__Entity__)
  WHERE NOT e.id IN $exclude_ids AND NOT toLower(e.title) IN $exclude_titles
  WITH f, e, COUNT { (e)<-[:HAS_ENTITY]-(:Chunk) } AS df
  WHERE df >= 2 AND df <= $max_df
  CALL (f, e) {
    MATCH (e)<-[:HAS_ENTITY]-(c:Chunk)
    WHERE c <> f AND NOT c.id IN $chunk_ids
    WITH c, vector.similarity.cosine(c.embedding, $vector) AS sim
    ORDER BY sim DESC, c.id
    LIMIT $per_entity
    RETURN c
  }
  WITH DISTINCT c
  RETURN collect(c {.id, .text, .n_tokens, .location,
                    similarity: vector.similarity.cosine(c.embedding, $vector) * 2 - 1}) AS chunks
}
CALL (chunks) {
  UNWIND $chunk_ids + [c IN chunks | c.id] AS cid
  WITH DISTINCT cid
  MATCH (c:Chunk {id: cid})-[:HAS_ENTITY]->(e:__Entity__)
  WHERE NOT e.id IN $exclude_ids AND NOT toLower(e.title) IN $exclude_titles
  WITH c, e, COUNT { (e)<-[:HAS_ENTITY]-(:Chunk) } AS df
  WHERE df <= $max_df
  RETURN collect({chunk: c.id, entity: e.id, title: e.title, df: df}) AS mentions
}
CALL (mentions) {
  UNWIND mentions AS m
  WITH DISTINCT m.entity AS eid
  WITH collect(eid) AS ids
  UNWIND ids AS eid
  MATCH (a:__Entity__ {id: eid})-[r:RELATED]-(b:__Entity__)
  WHERE a.id < b.id AND b.id IN ids
  WITH DISTINCT r, a, b
  RETURN collect({source: a.id, target: b.id, weight: coalesce(r.weight, 1.0)}) AS relations
}
RETURN chunks, mentions, relations
