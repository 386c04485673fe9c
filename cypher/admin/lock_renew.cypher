// Push the lock's lapse time on while $owner holds it; no row when it does not (it lapsed and was taken).
MATCH (l:DriftgraphLock {name: $lock, owner: $owner})
SET l.expires_at = timestamp() + $ttl_ms
RETURN l.expires_at AS expires_at
