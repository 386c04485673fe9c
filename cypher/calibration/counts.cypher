// Calibration: the vectors it measured against (entities, community reports with text).
RETURN COUNT { (e:__Entity__) WHERE e.embedding IS NOT NULL } AS entities,
       COUNT { (c:__Community__) WHERE c.embedding IS NOT NULL AND c.full_content IS NOT NULL } AS reports
