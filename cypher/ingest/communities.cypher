// One batch of communities (structure). Row: {id, community, level, parent, title, size, entity_ids,
// relationship_ids, text_unit_ids, period, human_readable_id}. `parent` is the parent's community number
// (-1 for a root); PARENT links are made by ingest/community_parents once every community exists.
// `title` is the community's own title; a report's title (ingest/community_reports) wins for c.title.
UNWIND $rows AS row
MERGE (c:__Community__ {id: row.id})
SET c.community = row.community,
    c.level = row.level,
    c.parent = row.parent,
    c.size = row.size,
    c.community_title = row.title,
    c.title = coalesce(c.report_title, row.title),
    c.relationship_ids = row.relationship_ids,
    c.text_unit_ids = row.text_unit_ids,
    c.period = row.period,
    c.human_readable_id = row.human_readable_id
WITH c, row
CALL (c, row) {
  UNWIND coalesce(row.entity_ids, []) AS entity_id
  MATCH (e:__Entity__ {id: entity_id})
  MERGE (e)-[:IN_COMMUNITY]->(c)
}
RETURN count(c) AS written
