// What a retrieval included, one row per item, in rank order (what a JVM service reads back).
MATCH (r:Retrieval {id: $id})-[e:INCLUDED]->(x)
RETURN e.source AS source, e.item_id AS id, e.rank AS rank, e.tokens AS tokens, e.hop AS hop
ORDER BY e.source, e.rank, e.item_id
