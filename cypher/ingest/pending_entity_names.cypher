// Entities whose name has no embedding yet (driftgraph/store/synonyms.py), one page in id order (keyset: ids
// after $after). Only the title is embedded: two names for one thing embed alike even when the descriptions
// around them differ.
MATCH (n:__Entity__)
WHERE n.id > $after AND n.name_embedding IS NULL AND trim(coalesce(n.title, '')) <> ''
RETURN n.id AS id, n.title AS title
ORDER BY n.id
LIMIT $limit
