// What the database holds now, for the indexer's incremental diff: [id, human_readable_id] per kind (the
// numbers are kept for ids that survive a run), relationships with their endpoints.
CALL () { MATCH (d:Document) RETURN collect([d.id, d.human_readable_id]) AS documents }
CALL () { MATCH (c:Chunk) RETURN collect([c.id, c.human_readable_id]) AS chunks }
CALL () { MATCH (e:__Entity__) RETURN collect([e.id, e.human_readable_id]) AS entities }
CALL () {
  MATCH (s:__Entity__)-[r:RELATED]->(t:__Entity__)
  RETURN collect([r.id, s.id, t.id, r.human_readable_id]) AS relationships
}
CALL () { MATCH (cl:Claim) RETURN collect([cl.id, cl.human_readable_id]) AS claims }
CALL () { MATCH (c:__Community__) RETURN collect(c.id) AS communities }
RETURN documents, chunks, entities, relationships, claims, communities
