// Local search, round trip 3 (multi-hop bridge, driftgraph/query/local/multihop.py): the chunks that share an
// entity with the frontier (chunks newly found at the previous hop). Parameters:
//   $vector        the query embedding
//   $frontier_ids  chunks whose entities seed this hop
//   $known_ids     chunks already candidates (not returned again)
//   $exclude_ids   entities never hopped through (also $exclude_titles, lower-case)
//   $max_df        entities mentioned in more chunks than this are not hopped through
//   $per_entity    chunks taken per (frontier chunk, entity), most query-similar first
//   $synonyms      also hop from an entity the frontier names to its synonyms (SYN, store/synonyms.py);
//                  such a link carries `synonym_of` {id, title}, the entity the frontier chunk named
//   $known_entity_ids  entities the search already holds (entry entities, the links' entities so far)
//   $relations     also return the RELATED edges among $known_entity_ids and this hop's link entities (each
//                  once; for the walk, ppr.known_relations), else an empty list
// Similarities are cosines in [-1, 1]. Lists come back unordered; the caller scores them.
CALL () {
  UNWIND $frontier_ids AS fid
  MATCH (f:Chunk {id: fid})-[:HAS_ENTITY]->(m:__Entity__)
  WHERE NOT m.id IN $exclude_ids AND NOT toLower(m.title) IN $exclude_titles
  UNWIND [{e: m, syn: ''}] + CASE WHEN $synonyms THEN [(m)-[:SYN]-(s:__Entity__) | {e: s, syn: m.id}] ELSE [] END
    AS step
  WITH f, step.e AS e, step.syn AS syn
  WHERE NOT e.id IN $exclude_ids AND NOT toLower(e.title) IN $exclude_titles
  WITH f, e, min(syn) AS syn  // named by the chunk itself ('') wins over reached through a synonym
  WITH f, e, syn, COUNT { (e)<-[:HAS_ENTITY]-(:Chunk) } AS df
  WHERE df >= CASE syn WHEN '' THEN 2 ELSE 1 END AND df <= $max_df  // a synonym may be in one other chunk
  CALL (f, e) {
    MATCH (e)<-[:HAS_ENTITY]-(c:Chunk)
    WHERE c <> f AND NOT c.id IN $known_ids
    WITH c, vector.similarity.cosine(c.embedding, $vector) AS sim
    ORDER BY sim DESC, c.id
    LIMIT $per_entity
    RETURN c
  }
  WITH f, e, df, c, CASE syn WHEN '' THEN null ELSE syn END AS syn_id
  OPTIONAL MATCH (named:__Entity__ {id: syn_id})
  RETURN collect({chunk: c.id, entity: e.id, title: e.title, df: df, via: f.id,
                  synonym_of: CASE WHEN named IS NULL THEN null ELSE {id: named.id, title: named.title} END}) AS links
}
CALL (links) {
  UNWIND [l IN links | l.chunk] AS cid
  WITH DISTINCT cid
  MATCH (c:Chunk {id: cid})
  RETURN collect(c {.id, .text, .n_tokens, .location,
                    similarity: vector.similarity.cosine(c.embedding, $vector) * 2 - 1}) AS chunks
}
CALL (links) {
  UNWIND CASE WHEN $relations
    THEN $known_entity_ids + [l IN links | l.entity] + [l IN links WHERE l.synonym_of IS NOT NULL | l.synonym_of.id]
    ELSE [] END AS eid
  WITH collect(DISTINCT eid) AS ids
  UNWIND ids AS eid
  MATCH (a:__Entity__ {id: eid})-[r:RELATED]-(b:__Entity__)
  WHERE a.id < b.id AND b.id IN ids
  WITH DISTINCT r, a, b
  RETURN collect({source: a.id, target: b.id, weight: coalesce(r.weight, 1.0)}) AS relations
}
RETURN links, chunks, relations
