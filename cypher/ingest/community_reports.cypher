// One batch of community reports, matched to their community by number. Row: {community, report_id,
// report_human_readable_id, title, summary, full_content, rank, rating_explanation, findings (JSON string
// of [{summary, explanation}]), full_content_json, n_tokens}. A changed full_content drops the embedding.
UNWIND $rows AS row
MATCH (c:__Community__ {community: row.community})
WITH c, row, c.full_content IS NOT NULL AND c.full_content <> row.full_content AS changed
SET c.report_id = row.report_id,
    c.report_human_readable_id = row.report_human_readable_id,
    c.report_title = row.title,
    c.title = coalesce(row.title, c.community_title),
    c.summary = row.summary,
    c.full_content = row.full_content,
    c.rank = row.rank,
    c.rating_explanation = row.rating_explanation,
    c.findings = row.findings,
    c.full_content_json = row.full_content_json,
    c.n_tokens = row.n_tokens
FOREACH (_ IN CASE WHEN changed THEN [1] ELSE [] END | REMOVE c.embedding)
RETURN count(c) AS written
