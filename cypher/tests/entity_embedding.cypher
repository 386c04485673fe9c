// Test support: one entity's stored embedding.
MATCH (e:__Entity__ {id: $id})
RETURN e.embedding AS embedding
