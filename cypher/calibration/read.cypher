// Calibration: the stored measurement (JSON string), null when none was made.
MATCH (m:DriftgraphMeta {key: 'driftgraph'})
RETURN m.calibration AS calibration
LIMIT 1
