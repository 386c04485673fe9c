SHOW INDEXES YIELD name, type, labelsOrTypes, properties, state, options
RETURN name, type, labelsOrTypes, properties, state,
       options.indexConfig.`vector.dimensions` AS dimensions
