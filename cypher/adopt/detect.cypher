// Which tool built the graph: the labels and relationship types each one writes (adopt/detect.py decides).
RETURN COUNT { (:Document) } AS documents,
       COUNT { (:Chunk) } AS chunks,
       COUNT { (:__Entity__) } AS entities,
       COUNT { (:__KGBuilder__) } AS kg_builder,
       COUNT { ()-[:FROM_CHUNK]->(:Chunk) } AS from_chunk,
       COUNT { (:Chunk)-[:FROM_DOCUMENT]->() } AS from_document,
       COUNT { (:Chunk)-[:PART_OF]->(:Document) } AS part_of,
       COUNT { (:Document)-[:FIRST_CHUNK]->(:Chunk) } AS first_chunk,
       COUNT { (:Chunk)-[:HAS_ENTITY]->() } AS has_entity,
       COUNT { (:Chunk)-[:NEXT_CHUNK]->(:Chunk) } AS next_chunk
