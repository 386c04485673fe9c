CALL db.index.fulltext.queryNodes('entity_fulltext', $q) YIELD node, score
RETURN node.id AS id, score
ORDER BY score DESC, id
