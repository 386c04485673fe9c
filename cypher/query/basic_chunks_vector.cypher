// Basic search: the $k chunks nearest to the question vector (cosine), best first, ties by id.
CALL db.index.vector.queryNodes('chunk_embedding', $k, $vector) YIELD node, score
RETURN node.id AS id, node.text AS text, node.n_tokens AS n_tokens, node.location AS location, score
ORDER BY score DESC, id
