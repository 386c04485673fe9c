// Every exported entity's id, title, type and degree: titles must be unique in GraphRAG's tables (relationships
// name their endpoints by title), and driftgraph merges entities by title and type, so the exporter renames
// the rarer of two entities that share a title.
MATCH (e:__Entity__)
WHERE NOT coalesce(e.placeholder, false)
RETURN e.id AS id, e.title AS title, e.type AS type, coalesce(e.degree, 0) AS degree
ORDER BY id
