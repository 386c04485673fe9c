// Recent retrievals, newest first.
MATCH (r:Retrieval)
RETURN r.id AS id, r.mode AS mode, r.query AS query, toString(r.created_at) AS created_at,
       r.stop_reason AS stop_reason, r.context_tokens AS context_tokens
ORDER BY r.created_at DESC, r.id
LIMIT $limit
