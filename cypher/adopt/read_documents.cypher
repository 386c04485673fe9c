// Every document with what adopt needs to give it a title (keys: what the node holds already).
MATCH (d:Document)
RETURN elementId(d) AS eid, d.id AS id, keys(d) AS keys, d.driftgraph_props AS owned,
       d.title AS title, d.fileName AS file_name, d.path AS path
ORDER BY d.id
