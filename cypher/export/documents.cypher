// One page of documents in id order (keyset: ids after $after), with their chunk ids in position order.
MATCH (d:Document)
WHERE d.id > $after
WITH d ORDER BY d.id LIMIT $limit
RETURN d.id AS id, d.human_readable_id AS human_readable_id, d.title AS title, d.text AS text,
       COLLECT { MATCH (d)<-[:PART_OF]-(c:Chunk) RETURN c.id ORDER BY c.position, c.id } AS text_unit_ids,
       d.creation_date AS creation_date, d.metadata AS metadata
