// Communities with a report but no embedding, one page in id order. Text = the report's full_content.
MATCH (n:__Community__)
WHERE n.id > $after AND n.embedding IS NULL AND n.full_content IS NOT NULL
RETURN n.id AS id, n.full_content AS text
ORDER BY n.id
LIMIT $limit
