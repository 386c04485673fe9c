// How many of these entity ids are stored.
MATCH (e:__Entity__) WHERE e.id IN $ids
RETURN count(e) AS found
