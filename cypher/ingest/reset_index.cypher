// `index --reset` without --reset-traces: every index node (documents ... communities, meta) with its
// relationships, in bounded batches as admin/reset.cypher does; stored retrievals (:Retrieval, :DriftStep)
// stay, only their links to deleted items go.
MATCH (a)-[r]->(b)
WHERE any(l IN labels(a) + labels(b)
          WHERE l IN ['Document', 'Chunk', '__Entity__', '__Community__', 'Claim', 'DriftgraphMeta'])
CALL (r) { DELETE r } IN TRANSACTIONS OF 10000 ROWS;

MATCH (n)
WHERE n:Document OR n:Chunk OR n:__Entity__ OR n:__Community__ OR n:Claim OR n:DriftgraphMeta
CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS;
