// Store name vectors on __Entity__ nodes (float32 via the procedure). Row: {id, embedding}. No vector index
// reads them: synonyms are found by comparing all names at once in numpy (driftgraph/store/synonyms.py).
// On a node of an adopted graph (it has `driftgraph_props`) the property is listed there as driftgraph's.
UNWIND $rows AS row
MATCH (n:__Entity__ {id: row.id})
CALL db.create.setNodeVectorProperty(n, 'name_embedding', row.embedding)
SET n.driftgraph_props = CASE WHEN n.driftgraph_props IS NULL OR 'name_embedding' IN n.driftgraph_props
      THEN n.driftgraph_props  // kept sorted, as adopt writes it
      ELSE [p IN n.driftgraph_props WHERE p < 'name_embedding'] + 'name_embedding'
           + [p IN n.driftgraph_props WHERE p > 'name_embedding'] END
RETURN count(n) AS written
