// One stored document with its text and places, or no row.
MATCH (d:Document {id: $id})
RETURN d.id AS id, d.title AS title, d.text AS text, d.metadata AS metadata, d.spans AS spans,
       d.human_readable_id AS human_readable_id,
       COUNT { (d)<-[:PART_OF]-(:Chunk) } AS chunks
