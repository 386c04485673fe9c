// Ids and structure to compare two index runs: entities, relationships, communities with members.
CALL () { MATCH (e:__Entity__) RETURN collect(e.id + '|' + e.title + '|' + e.type) AS entities }
CALL () { MATCH (s)-[r:RELATED]->(t) RETURN collect(r.id + '|' + s.id + '|' + t.id) AS relationships }
CALL () { MATCH (c:Chunk) RETURN collect(c.id) AS chunks }
CALL () {
  MATCH (c:__Community__)
  OPTIONAL MATCH (e:__Entity__)-[:IN_COMMUNITY]->(c)
  WITH c, e ORDER BY e.id
  WITH c, collect(e.id) AS members
  RETURN collect([c.id, toString(c.community), toString(c.level), toString(c.parent), coalesce(c.title, '')]
                 + members) AS communities
}
RETURN entities, relationships, chunks, communities
