CALL dbms.routing.getRoutingTable({}, $db) YIELD ttl, servers
RETURN ttl, servers
