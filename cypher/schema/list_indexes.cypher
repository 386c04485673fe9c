SHOW INDEXES YIELD name, type, labelsOrTypes, properties, state, populationPercent, options
RETURN name, type, labelsOrTypes, properties, state, populationPercent,
       options.indexConfig.`vector.dimensions` AS dimensions
