// driftgraph's communities carry the alias label when another tool's index covers __Community__.embedding.
MATCH (n:__Community__)
WHERE n.community_title IS NOT NULL AND NOT n:__DriftgraphCommunity__
SET n:__DriftgraphCommunity__
RETURN count(n) AS written
