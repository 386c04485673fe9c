// What the database holds now, for the indexer's incremental diff: ids per kind, relationship endpoints.
CALL () { MATCH (d:Document) RETURN collect(d.id) AS documents }
CALL () { MATCH (c:Chunk) RETURN collect(c.id) AS chunks }
CALL () { MATCH (e:__Entity__) RETURN collect(e.id) AS entities }
CALL () {
  MATCH (s:__Entity__)-[r:RELATED]->(t:__Entity__)
  RETURN collect([r.id, s.id, t.id]) AS relationships
}
CALL () { MATCH (cl:Claim) RETURN collect(cl.id) AS claims }
CALL () { MATCH (c:__Community__) RETURN collect(c.id) AS communities }
RETURN documents, chunks, entities, relationships, claims, communities
