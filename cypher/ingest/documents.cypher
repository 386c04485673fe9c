// One batch of documents. Row: {id, title, text, metadata (JSON string or null), spans (JSON string: where each
// page, slide or heading section sits in the text, so the document API can chunk a stored document again; [] for
// none, null when not known),
// creation_date, human_readable_id}
UNWIND $rows AS row
MERGE (d:Document {id: row.id})
SET d.title = row.title,
    d.text = row.text,
    d.metadata = row.metadata,
    d.spans = row.spans,
    d.creation_date = row.creation_date,
    d.human_readable_id = row.human_readable_id
RETURN count(d) AS written
