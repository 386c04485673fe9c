// Graph-model invariants after `driftgraph index` (DESIGN §3): counts and counts of violations.
CALL () { MATCH (d:Document) RETURN count(d) AS documents }
CALL () { MATCH (c:Chunk) RETURN count(c) AS chunks, count(c.embedding) AS chunk_vectors }
CALL () { MATCH (c:Chunk) WHERE NOT (c)-[:PART_OF]->(:Document) RETURN count(c) AS orphan_chunks }
CALL () { MATCH (:Chunk)-[n:NEXT_CHUNK]->(:Chunk) RETURN count(n) AS next_links }
CALL () {
  MATCH (a:Chunk)-[:NEXT_CHUNK]->(b:Chunk)
  WHERE b.position <> a.position + 1 OR NOT EXISTS { (a)-[:PART_OF]->(:Document)<-[:PART_OF]-(b) }
  RETURN count(*) AS bad_next
}
CALL () {
  MATCH (e:__Entity__)
  RETURN count(e) AS entities, count(e.embedding) AS entity_vectors,
         count(CASE WHEN e.n_tokens > 0 AND e.frequency > 0 THEN 1 END) AS entity_complete
}
CALL () { MATCH (e:__Entity__) WHERE NOT EXISTS { (:Chunk)-[:HAS_ENTITY]->(e) } RETURN count(e) AS unmentioned }
CALL () {
  MATCH (e:__Entity__)
  WHERE e.degree <> COUNT { (e)-[:RELATED]-() } OR e.frequency <> COUNT { (:Chunk)-[:HAS_ENTITY]->(e) }
  RETURN count(e) AS bad_degree
}
CALL () {
  MATCH (s)-[r:RELATED]->(t)
  RETURN count(r) AS relationships,
         count(CASE WHEN r.combined_degree <> s.degree + t.degree OR r.weight <= 0 OR r.n_tokens IS NULL
                    THEN 1 END) AS bad_relationships
}
CALL () {
  MATCH (c:__Community__)
  RETURN count(c) AS communities, count(c.full_content) AS reports, count(c.embedding) AS report_vectors,
         count(CASE WHEN c.full_content IS NOT NULL AND (c.findings IS NULL OR c.rank IS NULL OR c.summary IS NULL)
                    THEN 1 END) AS incomplete_reports
}
CALL () {
  MATCH (c:__Community__)
  WHERE (c.level > 0 AND NOT EXISTS { (c)-[:PARENT]->(:__Community__) })
     OR c.size <> COUNT { (:__Entity__)-[:IN_COMMUNITY]->(c) }
  RETURN count(c) AS bad_communities
}
CALL () {
  MATCH (c:__Community__)-[:PARENT]->(p:__Community__)
  WHERE p.level <> c.level - 1 OR EXISTS { (e:__Entity__)-[:IN_COMMUNITY]->(c) WHERE NOT (e)-[:IN_COMMUNITY]->(p) }
  RETURN count(*) AS bad_parents
}
CALL () {
  MATCH (cl:Claim)
  RETURN count(cl) AS claims,
         count(CASE WHEN NOT EXISTS { (cl)-[:FOUND_IN]->(:Chunk) } THEN 1 END) AS unfound_claims,
         count(CASE WHEN EXISTS { (cl)-[:ABOUT]->(:__Entity__) } THEN 1 END) AS claims_about
}
RETURN *
