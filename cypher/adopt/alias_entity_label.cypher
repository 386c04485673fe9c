// Entities carry driftgraph's alias label when another tool's index already covers __Entity__.embedding.
MATCH (n:__Entity__)
WHERE NOT n:__DriftgraphEntity__
SET n:__DriftgraphEntity__
RETURN count(n) AS written
