MATCH (n)
WHERE n:Document OR n:Chunk OR n:__Entity__ OR n:__Community__ OR n:Claim OR n:Retrieval OR n:DriftStep
   OR n:DriftgraphMeta
CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS
