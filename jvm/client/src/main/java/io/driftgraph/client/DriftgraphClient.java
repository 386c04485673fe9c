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
    /** Local search round trip 1: entity vector (+ fulltext) hits and chunk vector hits. */
    public static final String ENTRY = "query/local_entry";
    /** Local search round trip 2: the candidates reachable from the entry points. */
    public static final String EXPAND = "query/local_expand";

    /**
     * The statements this client runs and the parameter names it passes to each. A test compares them
     * with the {@code $names} in the files, so a renamed or added parameter fails the build.
     */
    public static final Map<String, Set<String>> PARAMETERS = Map.of(
            RETRIEVAL, Set.of("id"),
            STEPS, Set.of("id"),
            ENTRY, Set.of("vector", "entity_k", "fulltext", "fulltext_k", "chunk_k", "report_k"),
            EXPAND, Set.of("vector", "entity_ids", "seed_ids", "chunk_ids", "report_ids", "exclude_ids",
                    "exclude_titles", "max_df", "per_entity", "rels_per_entity", "max_level", "entity_seeds"));

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
        return readAll(List.of(name), params).get(0);
    }

    /** Several named statements with the same parameters in ONE read transaction (a consistent view). */
    List<List<Map<String, Object>>> readAll(List<String> names, Map<String, Object> params) {
        List<String> texts = names.stream().map(cypher::load).toList();
        String[] current = {names.get(0)};
        try (var session = driver.session(SessionConfig.forDatabase(database))) {
            return session.executeRead(tx -> {
                List<List<Map<String, Object>>> out = new ArrayList<>();
                for (int i = 0; i < texts.size(); i++) {
                    current[0] = names.get(i);
                    out.add(tx.run(texts.get(i), params).list(Plain::record));
                }
                return out;
            });
        } catch (RuntimeException e) {
            throw explain(e, connection, current[0]);
        }
    }

    /**
     * A stored retrieval: its properties (JSON-string fields {@code params}, {@code cost}, {@code trace}
     * decoded), the items it included and dropped, and its DRIFT steps (empty for other modes).
     */
    public Retrieval retrieval(String id) {
        List<List<Map<String, Object>>> results = readAll(List.of(RETRIEVAL, STEPS), Map.of("id", id));
        List<Map<String, Object>> rows = results.get(0);
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
        Map<String, String> locations = Retrieval.locations(props.get("trace"));
        for (Object edge : asList(row.get("edges"))) {
            Retrieval.Item item = Retrieval.Item.of(asMap(edge), locations);
            ("INCLUDED".equals(item.edge()) ? included : dropped).add(item);
        }
        List<Map<String, Object>> steps = new ArrayList<>();
        for (Map<String, Object> s : results.get(1)) {
            Map<String, Object> step = new LinkedHashMap<>(asMap(s.get("step")));
            step.remove("labels");
            step.put("parent", s.get("parent"));
            step.put("included", s.get("included"));
            steps.add(step);
        }
        return new Retrieval(id, props, included, dropped, steps);
    }

    /**
     * The raw entry row of a local search for a query embedding: {@code entity_vector} ({@code entityK} hits
     * {@code {id, title, similarity}}), {@code entity_fulltext} (when {@code fulltext} is a non-empty Lucene
     * query), {@code chunk_vector} ({@code chunkK} hits), {@code report_vector} ({@code reportK} community
     * report hits), {@code chunk_count} and {@code present} sources. Similarities are cosines in [-1, 1].
     */
    public Map<String, Object> entry(List<? extends Number> vector, int entityK, String fulltext, int fulltextK,
            int chunkK, int reportK) {
        Map<String, Object> params = new LinkedHashMap<>();
        params.put("vector", doubles(vector));
        params.put("entity_k", (long) positive("entityK", entityK));
        params.put("fulltext", fulltext == null ? "" : fulltext);
        params.put("fulltext_k", (long) positive("fulltextK", fulltextK));
        params.put("chunk_k", (long) Math.max(0, chunkK));
        params.put("report_k", (long) Math.max(0, reportK));
        List<Map<String, Object>> rows = read(ENTRY, params);
        return rows.isEmpty() ? Map.of() : rows.get(0);
    }

    /** The {@code k} entities nearest to {@code vector} (cosine in [-1, 1]), best first: id, title, similarity. */
    public List<Map<String, Object>> entitiesByVector(List<? extends Number> vector, int k) {
        List<Map<String, Object>> hits = new ArrayList<>();
        for (Object o : asList(entry(vector, k, "", 1, 0, 0).get("entity_vector"))) {
            hits.add(asMap(o));
        }
        hits.sort((a, b) -> {
            int bySim = Double.compare(sim(b), sim(a));
            return bySim != 0 ? bySim : String.valueOf(a.get("id")).compareTo(String.valueOf(b.get("id")));
        });
        return hits;
    }

    /**
     * Local-search expansion of {@code entityIds} (best first) for a query embedding: every reachable entity,
     * relationship, report, claim and chunk with its {@code n_tokens} and ranking signals, in one round trip.
     */
    public Expansion expand(List<String> entityIds, List<? extends Number> vector, Expansion.Options options) {
        Map<String, Object> params = new LinkedHashMap<>(options.params());
        params.put("vector", doubles(vector));
        params.put("entity_ids", List.copyOf(entityIds));
        List<Map<String, Object>> rows = read(EXPAND, params);
        return Expansion.of(rows.isEmpty() ? Map.of() : rows.get(0), options);
    }

    private static List<Double> doubles(List<? extends Number> vector) {
        if (vector == null || vector.isEmpty()) {
            throw new ClientException("the query vector is empty");
        }
        return vector.stream().map(Number::doubleValue).toList();
    }

    private static int positive(String name, int value) {
        if (value < 1) {
            throw new ClientException(name + " must be at least 1, got " + value);
        }
        return value;
    }

    private static double sim(Map<String, Object> hit) {
        return hit.get("similarity") instanceof Number n ? n.doubleValue() : -2;
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
