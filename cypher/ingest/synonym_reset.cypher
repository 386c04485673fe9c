// Forget every synonym edge and mark (the threshold changed): the synonym step then links every entity again.
// Name vectors stay (they do not depend on the threshold). Batched, so a big graph fits the tx memory.
MATCH (:__Entity__)-[r:SYN]->(:__Entity__)
CALL (r) { DELETE r } IN TRANSACTIONS OF 10000 ROWS;

MATCH (n:__Entity__)
WHERE n.synonyms_at IS NOT NULL
CALL (n) { REMOVE n.synonyms_at } IN TRANSACTIONS OF 10000 ROWS;
