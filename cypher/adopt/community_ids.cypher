// driftgraph's own communities (ingest/communities sets community_title); another tool's stay untouched.
MATCH (c:__Community__)
WHERE c.community_title IS NOT NULL
RETURN collect(c.id) AS ids
