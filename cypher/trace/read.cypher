// A stored retrieval: its properties and its edges as rows (for `driftgraph trace show` and JVM clients).
MATCH (r:Retrieval {id: $id})
RETURN r {.*, created_at: toString(r.created_at)} AS retrieval,
       COLLECT {
         MATCH (r)-[e:INCLUDED|DROPPED]->(x)
         RETURN {edge: type(e), source: e.source, item_id: e.item_id, rank: e.rank, tokens: e.tokens,
                 reason: e.reason, hop: e.hop, node_id: x.id, labels: labels(x)}
         ORDER BY type(e) DESC, e.source, e.rank, e.item_id
       } AS edges
