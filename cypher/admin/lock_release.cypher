// Give the lock back, if $owner still holds it.
MATCH (l:DriftgraphLock {name: $lock, owner: $owner})
SET l.owner = null, l.holder = null, l.expires_at = null
RETURN count(l) AS released
