// Chunks carry driftgraph's alias label when another tool's index already covers Chunk.embedding or .text.
MATCH (n:Chunk)
WHERE NOT n:__DriftgraphChunk__
SET n:__DriftgraphChunk__
RETURN count(n) AS written
