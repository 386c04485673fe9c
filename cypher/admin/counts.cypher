CALL () { MATCH (n:Document) RETURN count(n) AS documents }
CALL () { MATCH (n:Chunk) RETURN count(n) AS chunks }
CALL () { MATCH (n:__Entity__) WHERE NOT coalesce(n.placeholder, false) RETURN count(n) AS entities }
CALL () { MATCH (n:__Community__) RETURN count(n) AS communities }
CALL () { MATCH (n:Claim) RETURN count(n) AS claims }
CALL () { MATCH ()-[r:RELATED]->() RETURN count(r) AS relationships }
CALL () { MATCH (n:Retrieval) RETURN count(n) AS retrievals }
RETURN documents, chunks, entities, communities, claims, relationships, retrievals
