package io.driftgraph.client;

/** A problem explained in one line (missing cypher/ folder, unreachable Neo4j, unknown retrieval). */
public class ClientException extends RuntimeException {
    public ClientException(String message) {
        super(message);
    }

    public ClientException(String message, Throwable cause) {
        super(message, cause);
    }
}
