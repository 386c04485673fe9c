// The retrieved subgraph of one retrieval, for Neo4j Browser: the Retrieval node, every included node,
// the included relationships between entities, and the chunks' documents.
MATCH (r:Retrieval {id: $id})
OPTIONAL MATCH (r)-[i:INCLUDED]->(x)
OPTIONAL MATCH (x)-[rel:RELATED]->(y:__Entity__)
  WHERE i.source = 'relationship' AND rel.id = i.item_id
OPTIONAL MATCH (x)-[p:PART_OF]->(d:Document)
  WHERE i.source = 'chunk'
RETURN r, i, x, rel, y, p, d
