// What each chunk contributed, to compare two index runs: claim ids with their chunk, and every HAS_ENTITY
// mention as 'chunk id|entity title'.
CALL () { MATCH (cl:Claim) RETURN collect(cl.id + '|' + coalesce(cl.text_unit_id, '')) AS claims }
CALL () { MATCH (c:Chunk)-[:HAS_ENTITY]->(e:__Entity__) RETURN collect(c.id + '|' + e.title) AS mentions }
RETURN claims, mentions
