// A graph of another tool's labels, linked to a driftgraph node: reset must keep the pair and its edge.
MERGE (a:OtherThing {id: 'a'}) MERGE (b:OtherThing {id: 'b'}) MERGE (a)-[:KNOWS]->(b)
WITH a
MATCH (e:__Entity__ {id: $entity_id})
MERGE (a)-[:POINTS_AT]->(e)
