// Ids of the RELATED edges adopt wrote (they summarise the typed relations; nothing else is removed).
MATCH ()-[r:RELATED]->()
WHERE r.id STARTS WITH 'adopt:'
RETURN collect(r.id) AS ids
