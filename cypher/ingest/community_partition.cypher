// The stored community partition, for incremental clustering (index/partition.py): each community with its
// number, parent number, member entity ids and the graph basis it was computed on (null when none was kept).
MATCH (c:__Community__)
OPTIONAL MATCH (e:__Entity__)-[:IN_COMMUNITY]->(c)
WITH c, collect(e.id) AS members
RETURN c.id AS id, c.level AS level, c.community AS community, coalesce(c.parent, -1) AS parent,
       c.graph_basis AS graph_basis, members
ORDER BY id
