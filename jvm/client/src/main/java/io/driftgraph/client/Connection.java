package io.driftgraph.client;

import java.util.Map;

/**
 * Where the index lives: the same environment variables the Python side reads ({@code NEO4J_URI},
 * {@code NEO4J_USERNAME}, {@code NEO4J_PASSWORD}, {@code NEO4J_DATABASE}) with the same defaults as
 * driftgraph's {@code Neo4jConfig}.
 */
public record Connection(String uri, String username, String password, String database) {
    public static final String DEFAULT_URI = "bolt://127.0.0.1:7687";

    /** From the process environment. */
    public static Connection fromEnvironment() {
        return fromMap(System.getenv());
    }

    /** From a map of variables (the environment, or a test's own). */
    public static Connection fromMap(Map<String, String> env) {
        return new Connection(
                env.getOrDefault("NEO4J_URI", DEFAULT_URI),
                env.getOrDefault("NEO4J_USERNAME", "neo4j"),
                env.getOrDefault("NEO4J_PASSWORD", "driftgraph"),
                env.getOrDefault("NEO4J_DATABASE", "neo4j"));
    }

    @Override
    public String toString() {
        return "Connection[" + uri + ", user " + username + ", database " + database + "]";
    }
}
