// Every indexed item's human_readable_id, per kind ([id, number] pairs).
CALL () { MATCH (d:Document) RETURN collect([d.id, d.human_readable_id]) AS documents }
CALL () { MATCH (c:Chunk) RETURN collect([c.id, c.human_readable_id]) AS chunks }
CALL () { MATCH (e:__Entity__) RETURN collect([e.id, e.human_readable_id]) AS entities }
CALL () { MATCH ()-[r:RELATED]->() RETURN collect([r.id, r.human_readable_id]) AS relationships }
CALL () { MATCH (cl:Claim) RETURN collect([cl.id, cl.human_readable_id]) AS claims }
RETURN documents, chunks, entities, relationships, claims
