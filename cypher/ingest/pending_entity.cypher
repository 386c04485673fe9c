// Entities without an embedding, one page in id order (keyset: ids after $after). Text = title:description.
MATCH (n:__Entity__)
WHERE n.id > $after AND n.embedding IS NULL
RETURN n.id AS id, n.title + ':' + coalesce(n.description, '') AS text
ORDER BY n.id
LIMIT $limit
