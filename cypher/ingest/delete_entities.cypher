// Remove entities by id with every link (RELATED, HAS_ENTITY, IN_COMMUNITY, ABOUT). Row: {id}.
UNWIND $rows AS row
MATCH (e:__Entity__ {id: row.id})
DETACH DELETE e
RETURN count(e) AS written
