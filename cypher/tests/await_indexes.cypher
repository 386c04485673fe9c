CALL db.awaitIndexes(60)
