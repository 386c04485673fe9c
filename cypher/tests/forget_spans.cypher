// A document as an earlier version stored it, before places were kept (no spans property).
MATCH (d:Document {id: $document_id})
REMOVE d.spans
RETURN count(d) AS forgotten
