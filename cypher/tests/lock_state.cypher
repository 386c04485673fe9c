// The writer lock's node, or no row.
MATCH (l:DriftgraphLock {name: $lock})
RETURN l.owner AS owner, l.holder AS holder, l.expires_at < timestamp() AS lapsed
