CALL db.index.vector.queryNodes('entity_embedding', $k, $vector) YIELD node, score
RETURN node.id AS id, score
ORDER BY score DESC, id
