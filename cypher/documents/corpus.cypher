// Every stored document with what it takes to chunk it again (text, places): the corpus a document change
// is applied to (index/documents.py).
MATCH (d:Document)
RETURN d.id AS id, d.title AS title, d.text AS text, d.metadata AS metadata, d.spans AS spans
ORDER BY d.id
