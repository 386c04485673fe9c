// Basic search (hybrid): the $k best chunk_fulltext hits for an escaped Lucene query, best first.
CALL db.index.fulltext.queryNodes('chunk_fulltext', $query, {limit: $k}) YIELD node, score
RETURN node.id AS id, node.text AS text, node.n_tokens AS n_tokens, node.location AS location, score
ORDER BY score DESC, id
