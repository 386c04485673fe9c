// Test helper: remove community reports and claims, to check that local search answers without them.
MATCH (n)
WHERE n:__Community__ OR n:Claim
DETACH DELETE n
