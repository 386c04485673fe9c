// How many communities (and how many with a report) each level holds; global search checks its level.
MATCH (c:__Community__)
RETURN c.level AS level, count(c) AS communities, count(c.full_content) AS reports
ORDER BY level
