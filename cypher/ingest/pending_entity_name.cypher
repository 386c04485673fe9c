// Entities whose name has no embedding yet (ingest.embed_pending, kind entity_name), one page in id order (keyset: ids
// after $after). Only the title is embedded: two names for one thing embed alike even when the descriptions
// around them differ.
MATCH (n:__Entity__)
WHERE n.id > $after AND n.name_embedding IS NULL AND trim(coalesce(n.title, '')) <> ''
RETURN n.id AS id, n.title AS text
ORDER BY n.id
LIMIT $limit
