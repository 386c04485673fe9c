// Test helper: remove community reports, claims and chunks, to check that local search answers without them.
MATCH (n)
WHERE n:__Community__ OR n:Claim OR n:Chunk
DETACH DELETE n
