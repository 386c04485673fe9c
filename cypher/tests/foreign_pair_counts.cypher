// What is left of foreign_pair.cypher's graph.
CALL () { MATCH (n:OtherThing) RETURN count(n) AS nodes }
CALL () { MATCH (:OtherThing)-[r:KNOWS]->(:OtherThing) RETURN count(r) AS knows }
CALL () { MATCH (:OtherThing)-[r:POINTS_AT]->() RETURN count(r) AS points_at }
RETURN nodes, knows, points_at
