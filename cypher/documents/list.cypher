// The stored documents, in title then id order, without their text: what `documents list` shows.
MATCH (d:Document)
RETURN d.id AS id, d.title AS title, d.metadata AS metadata, size(d.text) AS characters,
       d.human_readable_id AS human_readable_id,
       COUNT { (d)<-[:PART_OF]-(:Chunk) } AS chunks
ORDER BY d.title, d.id
