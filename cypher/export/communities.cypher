// One page of communities in id order with members, children (by number) and the report on the node.
MATCH (c:__Community__)
WHERE c.id > $after
WITH c ORDER BY c.id LIMIT $limit
RETURN c.id AS id, c.human_readable_id AS human_readable_id, c.community AS community, c.level AS level,
       coalesce(c.parent, -1) AS parent,
       COLLECT { MATCH (c)<-[:PARENT]-(k:__Community__) RETURN k.community ORDER BY k.community } AS children,
       coalesce(c.community_title, c.title) AS title,
       COLLECT { MATCH (e:__Entity__)-[:IN_COMMUNITY]->(c) RETURN e.id ORDER BY e.human_readable_id, e.id } AS entity_ids,
       coalesce(c.relationship_ids, []) AS relationship_ids, coalesce(c.text_unit_ids, []) AS text_unit_ids,
       c.period AS period, c.size AS size,
       c.report_id AS report_id, c.report_human_readable_id AS report_human_readable_id,
       c.report_title AS report_title, c.summary AS summary, c.full_content AS full_content, c.rank AS rank,
       c.rating_explanation AS rating_explanation, c.findings AS findings, c.full_content_json AS full_content_json
