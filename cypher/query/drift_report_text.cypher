// The full report of one community (DRIFT's HyDE template).
MATCH (c:__Community__ {id: $id})
RETURN c.full_content AS text
