// Calibration: nothing to measure (no entity vectors): a value measured on an earlier state of the index goes.
MATCH (m:DriftgraphMeta {key: 'driftgraph'})
REMOVE m.min_similarity, m.report_min_similarity, m.calibration
