// Nodes and RELATED relationships sharing an id with another of the same label (0 after any crash + re-run).
CALL () {
  MATCH (n) WHERE n.id IS NOT NULL
  WITH labels(n) AS l, n.id AS id, count(*) AS c WHERE c > 1
  RETURN count(*) AS nodes
}
CALL () {
  MATCH ()-[r:RELATED]->() WHERE r.id IS NOT NULL
  WITH r.id AS id, count(*) AS c WHERE c > 1
  RETURN count(*) AS rels
}
RETURN nodes + rels AS duplicates
