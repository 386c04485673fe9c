// Ids of every community that has a report, in id order: DRIFT draws its HyDE template from them (seeded).
MATCH (c:__Community__)
WHERE c.full_content IS NOT NULL
RETURN c.id AS id
ORDER BY c.id
