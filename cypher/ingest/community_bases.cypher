// What a community and its report were computed from, for the next incremental run. Row: {id, graph_basis,
// report_basis}: graph_basis hashes the edges touching its members, report_basis its report's input data.
// A null report_basis (no report written this run) keeps the stored one: a report whose regeneration failed
// stays marked as computed from its old data, so the next run tries again instead of reusing it.
UNWIND $rows AS row
MATCH (c:__Community__ {id: row.id})
SET c.graph_basis = row.graph_basis, c.report_basis = coalesce(row.report_basis, c.report_basis)
RETURN count(c) AS written
