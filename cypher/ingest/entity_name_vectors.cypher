// The name vectors of these entities ($ids), for the synonym step's comparison (driftgraph/store/synonyms.py).
UNWIND $ids AS id
MATCH (n:__Entity__ {id: id})
RETURN n.id AS id, n.name_embedding AS embedding
