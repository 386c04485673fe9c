// Stored reports of these communities (reused when a community's id and its report basis are unchanged).
MATCH (c:__Community__)
WHERE c.id IN $ids AND c.full_content IS NOT NULL
RETURN c.id AS id, c.report_title AS title, c.summary AS summary, c.rank AS rank,
       c.rating_explanation AS rating_explanation, c.findings AS findings, c.full_content AS full_content,
       c.report_basis AS basis
