// What a community and its report were computed from, for the next incremental run. Row: {id, graph_basis,
// report_basis}: graph_basis hashes the edges touching its members, report_basis its report's input data
// (null when it has no report, so the next run writes one).
UNWIND $rows AS row
MATCH (c:__Community__ {id: row.id})
SET c.graph_basis = row.graph_basis, c.report_basis = row.report_basis
RETURN count(c) AS written
