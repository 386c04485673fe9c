// Every driftgraph node, with its relationships; other labels stay. Relationships go first, in bounded
// batches: DETACH DELETE of a batch of nodes deletes all their relationships in the same transaction, which
// for hub entities or big graphs can exceed the transaction memory. The second statement then deletes nodes
// that have none left (DETACH only for a relationship written in between).
MATCH (a)-[r]->(b)
WHERE any(l IN labels(a) + labels(b)
          WHERE l IN ['Document', 'Chunk', '__Entity__', '__Community__', 'Claim', 'Retrieval', 'DriftStep',
                      'DriftgraphMeta'])
CALL (r) { DELETE r } IN TRANSACTIONS OF 10000 ROWS;

MATCH (n)
WHERE n:Document OR n:Chunk OR n:__Entity__ OR n:__Community__ OR n:Claim OR n:Retrieval OR n:DriftStep
   OR n:DriftgraphMeta
CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 10000 ROWS;
