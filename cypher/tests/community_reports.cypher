// Every community with its number, size (entities), report text and report basis, for the incremental tests.
MATCH (c:__Community__)
RETURN c.id AS id, c.community AS community, c.level AS level, c.size AS size, c.full_content AS full_content,
       c.report_basis AS report_basis, c.graph_basis AS graph_basis
ORDER BY id
