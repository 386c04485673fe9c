package io.driftgraph.client;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.neo4j.driver.AuthTokens;
import org.neo4j.driver.Config;
import org.neo4j.driver.Driver;
import org.neo4j.driver.GraphDatabase;
import org.neo4j.driver.Logging;
import org.neo4j.driver.NotificationConfig;
import org.neo4j.driver.SessionConfig;
import org.neo4j.driver.exceptions.AuthenticationException;
import org.neo4j.driver.exceptions.Neo4jException;
import org.neo4j.driver.exceptions.ServiceUnavailableException;

/**
 * Reads a driftgraph index over Bolt with the statements in {@code cypher/}: stored retrievals, local-search
 * expansion and vector entity lookup. Every call is one read transaction running one named file.
 */
public final class DriftgraphClient implements AutoCloseable {
    /** A stored retrieval and its INCLUDED/DROPPED edges. */
    public static final String RETRIEVAL = "trace/read";
    /** A retrieval's DRIFT step tree. */
    public static final String STEPS = "trace/steps";
    /** Entities nearest to an embedding. */
    public static final String ENTITIES_BY_VECTOR = "query/entities_by_vector";

    /**
     * The statements this client runs and the parameter names it passes to each. A test compares them
     * with the {@code $names} in the files, so a renamed or added parameter fails the build.
     */
    public static final Map<String, Set<String>> PARAMETERS = Map.of(
            RETRIEVAL, Set.of("id"),
            STEPS, Set.of("id"),
            ENTITIES_BY_VECTOR, Set.of("k", "vector"));

    private static final ObjectMapper JSON = new ObjectMapper();

    private final Driver driver;
    private final boolean ownsDriver;
    private final String database;
    private final CypherFiles cypher;
    private final Connection connection;

    private DriftgraphClient(Driver driver, boolean ownsDriver, Connection connection, CypherFiles cypher) {
        this.driver = driver;
        this.ownsDriver = ownsDriver;
        this.database = connection.database();
        this.connection = connection;
        this.cypher = cypher;
    }

    /** Connects (and checks connectivity) with statements from {@code cypher}. */
    public static DriftgraphClient connect(Connection connection, CypherFiles cypher) {
        Config config = Config.builder()
                .withLogging(Logging.none())
                .withNotificationConfig(NotificationConfig.disableAllConfig())
                .build();
        Driver driver = GraphDatabase.driver(
                connection.uri(), AuthTokens.basic(connection.username(), connection.password()), config);
        try {
            driver.verifyConnectivity();
        } catch (RuntimeException e) {
            driver.close();
            throw explain(e, connection, "connect");
        }
        return new DriftgraphClient(driver, true, connection, cypher);
    }

    /** The environment's Neo4j ({@code NEO4J_*}) and cypher/ folder ({@code driftgraph.root}). */
    public static DriftgraphClient fromEnvironment() {
        return connect(Connection.fromEnvironment(), CypherFiles.fromEnvironment());
    }

    /** Wraps a driver the caller owns (and closes). */
    public static DriftgraphClient wrap(Driver driver, String database, CypherFiles cypher) {
        return new DriftgraphClient(driver, false, new Connection("(caller's driver)", "", "", database), cypher);
    }

    public CypherFiles cypher() {
        return cypher;
    }

    /** Runs a named statement in a read transaction; rows as plain maps. */
    public List<Map<String, Object>> read(String name, Map<String, Object> params) {
        String text = cypher.load(name);
        try (var session = driver.session(SessionConfig.forDatabase(database))) {
            return session.executeRead(tx -> tx.run(text, params).list(Plain::record));
        } catch (RuntimeException e) {
            throw explain(e, connection, name);
        }
    }

    /**
     * A stored retrieval: its properties (JSON-string fields {@code params}, {@code cost}, {@code trace}
     * decoded), the items it included and dropped, and its DRIFT steps (empty for other modes).
     */
    public Retrieval retrieval(String id) {
        List<Map<String, Object>> rows = read(RETRIEVAL, Map.of("id", id));
        if (rows.isEmpty()) {
            throw new ClientException("no retrieval with id '" + id + "'");
        }
        Map<String, Object> row = rows.get(0);
        Map<String, Object> props = new LinkedHashMap<>(asMap(row.get("retrieval")));
        for (String key : List.of("params", "cost", "trace")) {
            if (props.get(key) instanceof String s) {
                props.put(key, decode(s));
            }
        }
        List<Retrieval.Item> included = new ArrayList<>();
        List<Retrieval.Item> dropped = new ArrayList<>();
        for (Object edge : asList(row.get("edges"))) {
            Retrieval.Item item = Retrieval.Item.of(asMap(edge));
            ("INCLUDED".equals(item.edge()) ? included : dropped).add(item);
        }
        List<Map<String, Object>> steps = new ArrayList<>();
        for (Map<String, Object> s : read(STEPS, Map.of("id", id))) {
            Map<String, Object> step = new LinkedHashMap<>(asMap(s.get("step")));
            step.remove("labels");
            step.put("parent", s.get("parent"));
            steps.add(step);
        }
        return new Retrieval(id, props, included, dropped, steps);
    }

    /** The {@code k} entities nearest to {@code vector} (cosine), best first, with id, title and score. */
    public List<Map<String, Object>> entitiesByVector(List<? extends Number> vector, int k) {
        if (vector.isEmpty()) {
            throw new ClientException("the query vector is empty");
        }
        if (k < 1) {
            throw new ClientException("k must be at least 1, got " + k);
        }
        List<Double> values = vector.stream().map(Number::doubleValue).toList();
        return read(ENTITIES_BY_VECTOR, Map.of("k", (long) k, "vector", values));
    }

    public Expansion expand(List<String> entityIds, List<? extends Number> vector, Expansion.Options options) {
        throw new ClientException("not yet");
    }

    @Override
    public void close() {
        if (ownsDriver) {
            driver.close();
        }
    }

    private static Object decode(String text) {
        try {
            return JSON.readValue(text, Object.class);
        } catch (JsonProcessingException e) {
            return text;
        }
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> asMap(Object o) {
        return o instanceof Map<?, ?> m ? (Map<String, Object>) m : Map.of();
    }

    @SuppressWarnings("unchecked")
    static List<Object> asList(Object o) {
        return o instanceof List<?> l ? (List<Object>) l : List.of();
    }

    static ClientException explain(RuntimeException e, Connection c, String what) {
        if (e instanceof ClientException ce) {
            return ce;
        }
        if (e instanceof AuthenticationException) {
            return new ClientException("Neo4j at " + c.uri() + " rejected user '" + c.username()
                    + "': wrong password? (set NEO4J_PASSWORD)", e);
        }
        if (e instanceof ServiceUnavailableException) {
            return new ClientException("Neo4j is not reachable at " + c.uri()
                    + ": start one with `driftgraph neo4j start`, or set NEO4J_URI", e);
        }
        if (e instanceof Neo4jException n) {
            return new ClientException("cypher/" + what + ".cypher failed on " + c.uri() + ": " + n.code()
                    + ": " + n.getMessage(), e);
        }
        return new ClientException(what + ": " + e, e);
    }
}
