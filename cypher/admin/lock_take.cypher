// Take the named writer lock for $owner when it is free, lapsed (its holder stopped renewing), already
// $owner's (a retried transaction), or $stale's (a holder on this machine whose process is gone). The first
// SET takes the node's write lock before anything is read, so two writers asking at once are served one after
// the other and only one is told `taken`. Server time throughout.
MERGE (l:DriftgraphLock {name: $lock})
SET l.asked_at = timestamp()
WITH l, l.owner IS NULL OR l.expires_at < timestamp() OR l.owner IN [$owner, $stale] AS free
SET l.owner = CASE WHEN free THEN $owner ELSE l.owner END,
    l.holder = CASE WHEN free THEN $holder ELSE l.holder END,
    l.machine = CASE WHEN free THEN $machine ELSE l.machine END,
    l.pid = CASE WHEN free THEN $pid ELSE l.pid END,
    l.taken_at = CASE WHEN free THEN timestamp() ELSE l.taken_at END,
    l.expires_at = CASE WHEN free THEN timestamp() + $ttl_ms ELSE l.expires_at END
RETURN free AS taken, l.owner AS owner, l.holder AS holder, l.machine AS machine, l.pid AS pid,
       l.taken_at AS taken_at
