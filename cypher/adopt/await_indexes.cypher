// Every index ONLINE before adopt returns, so a query right after finds the alias-label indexes populated.
CALL db.awaitIndexes($seconds);
