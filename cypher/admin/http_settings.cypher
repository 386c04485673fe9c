// The server's HTTP connector (doctor prints the Neo4j Browser URL from it; servers that refuse SHOW SETTINGS,
// such as Aura, simply get no URL).
SHOW SETTINGS YIELD name, value
WHERE name IN ['server.http.enabled', 'server.http.listen_address', 'server.http.advertised_address']
RETURN name, value
