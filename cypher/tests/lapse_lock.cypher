// Make the writer lock look like its holder died a while ago (it stopped renewing).
MATCH (l:DriftgraphLock {name: $lock})
SET l.expires_at = timestamp() - 1000
RETURN count(l) AS lapsed
