// Entities a relationship names but entities.parquet lacks: kept as flagged placeholders so no relationship
// is lost (export-graphrag leaves them out of entities.parquet, so the export equals what came in).
UNWIND $rows AS r
MERGE (e:__Entity__ {id: r.id})
SET e.title = r.title, e.placeholder = true, e.description = coalesce(e.description, '')
