// Properties driftgraph owns on one node of the other tool's graph. Row: {eid, props, owned}; `owned` lists
// every property driftgraph added to this node, so a re-run never writes a property the other tool set.
UNWIND $rows AS row
MATCH (n)
WHERE elementId(n) = row.eid
SET n += row.props,
    n.driftgraph_props = row.owned
RETURN count(n) AS written
