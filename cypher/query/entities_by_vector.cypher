// The $k entities nearest to an embedding (cosine on the entity_embedding index), best first.
CALL db.index.vector.queryNodes('entity_embedding', $k, $vector) YIELD node, score
RETURN node.id AS id, node.title AS title, node.type AS type, node.description AS description,
       node.n_tokens AS n_tokens, node.degree AS degree, score
ORDER BY score DESC, id
