// How many retrievals a prune with this cutoff would delete.
MATCH (r:Retrieval)
WHERE r.created_at < datetime($cutoff)
RETURN count(r) AS retrievals
