// One batch of documents. Row: {id, title, text, metadata (JSON string or null), creation_date, human_readable_id}
UNWIND $rows AS row
MERGE (d:Document {id: row.id})
SET d.title = row.title,
    d.text = row.text,
    d.metadata = row.metadata,
    d.creation_date = row.creation_date,
    d.human_readable_id = row.human_readable_id
RETURN count(d) AS written
