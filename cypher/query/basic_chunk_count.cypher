// Chunks in the database, and how many carry an embedding (asked only when the vector search found nothing).
MATCH (c:Chunk)
RETURN count(c) AS chunks, count(c.embedding) AS embedded
