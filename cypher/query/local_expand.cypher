// Local search, round trip 2: expansion of the kept entry points, every candidate with n_tokens and the
// signals that rank it. Parameters:
//   $vector           the query embedding
//   $entity_ids       kept entry entities, best first
//   $report_ids       community report vector hits
//   $seed_ids         top chunk hits whose rare entities seed the second hop (with $entity_seeds)
//   $chunk_ids        chunk vector hits
//   $exclude_ids      entities never hopped through nor related to (also $exclude_titles, lower-case)
//   $max_df           entities mentioned in more chunks are too common to hop through
//   $per_entity       chunks fetched per entry entity (most query-similar first)
//   $rels_per_entity  relationships per entry entity (in-network first)
//   $max_level        highest community level whose reports the entities bring in
//   $entity_seeds     each entry entity's best (most query-similar) chunks that also seed the second hop
// Similarities are cosines in [-1, 1]. Lists come back unordered; the caller ranks them. An entity link's
// `pos` is the chunk's place (0 = most query-similar) among the chunks fetched for that entity; a seed
// link's `via` is the seed chunk (a chunk hit, or an entry entity's chunk) that shares the rare entity.
CALL () {
  UNWIND range(0, size($entity_ids) - 1) AS i
  MATCH (e:__Entity__ {id: $entity_ids[i]})
  RETURN collect(e {.id, .title, .type, .description, .n_tokens, .degree, entry_rank: i + 1,
                    similarity: vector.similarity.cosine(e.embedding, $vector) * 2 - 1}) AS entities
}
CALL () {
  UNWIND $entity_ids AS eid
  MATCH (e:__Entity__ {id: eid})
  CALL (e) {
    MATCH (e)-[r:RELATED]-(o:__Entity__)
    WHERE NOT o.id IN $exclude_ids AND NOT toLower(o.title) IN $exclude_titles
    WITH r, o.id IN $entity_ids AS in_network
    ORDER BY in_network DESC, r.weight DESC, r.combined_degree DESC, r.id
    LIMIT $rels_per_entity
    RETURN r, in_network
  }
  RETURN collect({id: r.id, entity_id: e.id, source: startNode(r).title, target: endNode(r).title,
                  description: r.description, weight: r.weight, combined_degree: r.combined_degree,
                  n_tokens: r.n_tokens, in_network: in_network}) AS relationships
}
CALL () {
  CALL () {
    UNWIND $entity_ids AS eid
    MATCH (:__Entity__ {id: eid})-[:IN_COMMUNITY]->(c:__Community__)
    WHERE c.level <= $max_level AND c.full_content IS NOT NULL
    RETURN c, 1 AS hit
    UNION ALL
    UNWIND $report_ids AS rid
    MATCH (c:__Community__ {id: rid})
    WHERE c.full_content IS NOT NULL
    RETURN c, 0 AS hit
  }
  WITH c, sum(hit) AS matched
  RETURN collect(c {.id, .community, .title, .level, .rank, .n_tokens, .full_content, .summary, matched: matched,
                    similarity: vector.similarity.cosine(c.embedding, $vector) * 2 - 1}) AS reports
}
CALL () {
  UNWIND $entity_ids AS eid
  MATCH (cl:Claim)-[:ABOUT]->(:__Entity__ {id: eid})
  WITH cl, min(eid) AS entity_id
  RETURN collect(cl {.id, .type, .status, .description, .subject, .object, .start_date, .end_date,
                     entity_id: entity_id}) AS claims
}
CALL () {
  UNWIND $entity_ids AS eid
  MATCH (e:__Entity__ {id: eid})
  WITH e, COUNT { (e)<-[:HAS_ENTITY]-(:Chunk) } AS df
  CALL (e) {
    MATCH (e)<-[:HAS_ENTITY]-(c:Chunk)
    WITH c, vector.similarity.cosine(c.embedding, $vector) AS sim
    ORDER BY sim DESC, c.id
    LIMIT $per_entity
    RETURN collect(c.id) AS cids
  }
  UNWIND range(0, size(cids) - 1) AS k
  RETURN collect({chunk: cids[k], entity: e.id, title: e.title, df: df, via: null, pos: k}) AS entity_links
}
CALL (entity_links) {
  UNWIND $seed_ids + [l IN entity_links WHERE l.pos < $entity_seeds | l.chunk] AS seed
  WITH DISTINCT seed AS sid
  MATCH (s:Chunk {id: sid})-[:HAS_ENTITY]->(e:__Entity__)
  WHERE NOT e.id IN $exclude_ids AND NOT toLower(e.title) IN $exclude_titles
  WITH s, e, COUNT { (e)<-[:HAS_ENTITY]-(:Chunk) } AS df
  WHERE df >= 2 AND df <= $max_df
  MATCH (e)<-[:HAS_ENTITY]-(c:Chunk)
  WHERE c <> s
  RETURN collect({chunk: c.id, entity: e.id, title: e.title, df: df, via: s.id}) AS seed_links
}
CALL (seed_links, entity_links) {
  UNWIND $chunk_ids + [l IN seed_links | l.chunk] + [l IN entity_links | l.chunk] AS cid
  WITH DISTINCT cid
  MATCH (c:Chunk {id: cid})
  RETURN collect(c {.id, .text, .n_tokens, .location,
                    similarity: vector.similarity.cosine(c.embedding, $vector) * 2 - 1}) AS chunks
}
RETURN entities, relationships, reports, claims, seed_links, entity_links, chunks
