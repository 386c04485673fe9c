// DRIFT primer: the $k community reports nearest to the (HyDE) query vector, best first. `label` is the
// short id shown to the model and cited back ([Data: Reports (label)]): the community number.
CALL db.index.vector.queryNodes('community_embedding', $k, $vector) YIELD node, score
WHERE node.full_content IS NOT NULL
RETURN node.id AS id, toString(coalesce(node.community, node.id)) AS label, coalesce(node.title, '') AS title,
       node.full_content AS text, node.n_tokens AS n_tokens, score
ORDER BY score DESC, id
