// Chunks without an embedding, one page in id order (keyset: ids after $after). Text = the chunk text.
MATCH (n:Chunk)
WHERE n.id > $after AND n.embedding IS NULL
RETURN n.id AS id, coalesce(n.text, '') AS text
ORDER BY n.id
LIMIT $limit
