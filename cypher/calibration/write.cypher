// Calibration: the index's calibrated entry thresholds on its meta node (numbers, read by query/local_entry),
// and the whole measurement as a JSON string (read by doctor and the summaries).
MATCH (m:DriftgraphMeta {key: 'driftgraph'})
SET m.min_similarity = $min_similarity,
    m.report_min_similarity = $report_min_similarity,
    m.calibration = $calibration
