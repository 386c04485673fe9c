// Every entity's title and description (small test graphs only).
MATCH (e:__Entity__)
RETURN e.title AS title, e.description AS description
