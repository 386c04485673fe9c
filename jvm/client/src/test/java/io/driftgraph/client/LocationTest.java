package io.driftgraph.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.neo4j.driver.AuthTokens;
import org.neo4j.driver.Driver;
import org.neo4j.driver.GraphDatabase;
import org.neo4j.driver.SessionConfig;
import org.neo4j.driver.Values;

/**
 * A chunk's {@code location} (its page, slide or heading path) reaches the JVM: on expansion candidates and on
 * the items of a stored retrieval. operation-dulce is plain text, so the test gives one chunk the location an
 * indexed PDF page would have, runs a Python local search over it, and takes it off again afterwards.
 */
class LocationTest {
    static final String WHERE = "pages 7-8";
    static TestIndex index;
    static Driver driver;
    static String chunkId;

    @BeforeAll
    static void setUp() {
        index = TestIndex.get();
        Connection c = Connection.fromEnvironment();
        driver = GraphDatabase.driver(c.uri(), AuthTokens.basic(c.username(), c.password()));
        chunkId = index.pythonItems().stream()
                .filter(i -> "chunk".equals(i.get("source")) && "included".equals(i.get("status")))
                .map(i -> String.valueOf(i.get("id"))).findFirst()
                .orElseThrow(() -> new AssertionError("the Python run included no chunk"));
        setLocation(WHERE);
    }

    @AfterAll
    static void tearDown() {
        if (driver != null) {
            setLocation(null); // operation-dulce as imported (the Python tests fingerprint it)
            driver.close();
        }
    }

    private static void setLocation(String where) {
        String db = Connection.fromEnvironment().database();
        try (var session = driver.session(SessionConfig.forDatabase(db))) {
            session.executeWriteWithoutResult(tx -> tx.run("MATCH (c:Chunk {id: $id}) SET c.location = $where",
                    Values.parameters("id", chunkId, "where", where)));
        }
    }

    @Test
    void expansionCandidatesCarryTheChunkLocation() {
        List<String> entities = index.pythonEntry().stream()
                .filter(e -> "entity".equals(e.getOrDefault("kind", "entity")) && "kept".equals(e.get("status")))
                .map(e -> String.valueOf(e.get("id"))).toList();
        Expansion.Options options = Expansion.Options.defaults().withHits(List.of(), List.of(chunkId), List.of());
        Expansion x = index.client.expand(entities, index.questionVector(), options);
        Expansion.Candidate located = x.of("chunk").stream().filter(c -> c.id().equals(chunkId)).findFirst()
                .orElseThrow(() -> new AssertionError("the chunk hit is not a candidate"));
        assertEquals(WHERE, located.location());
        assertTrue(x.of("chunk").stream().filter(c -> !c.id().equals(chunkId)).allMatch(c -> c.location() == null),
                "only the located chunk has a location");
        assertNull(x.of("entity").get(0).location(), "an entity has no location");
    }

    @Test
    void storedRetrievalItemsCarryTheLocationTheTraceRecorded() {
        Map<String, Object> python = index.queryLocal();
        String id = String.valueOf(python.get("retrieval_id"));
        Map<String, Object> pyItem = DriftgraphClient.asList(DriftgraphClient.asMap(python.get("trace")).get("items"))
                .stream().map(DriftgraphClient::asMap)
                .filter(i -> "chunk".equals(i.get("source")) && chunkId.equals(i.get("id"))).findFirst()
                .orElseThrow(() -> new AssertionError("the located chunk left the Python trace"));
        assertEquals(WHERE, pyItem.get("location"));
        Retrieval r = index.client.retrieval(id);
        Retrieval.Item item = (("included".equals(pyItem.get("status"))) ? r.included() : r.dropped()).stream()
                .filter(i -> i.key().equals("chunk:" + chunkId)).findFirst()
                .orElseThrow(() -> new AssertionError("no edge to the located chunk"));
        assertEquals(WHERE, item.location());
        assertEquals(WHERE, item.toMap().get("location"));
        Retrieval.Item other = r.included().stream().filter(i -> !i.key().equals("chunk:" + chunkId)).findFirst()
                .orElseThrow();
        assertNull(other.location());
        assertNotNull(r.toMap().get("trace"));
    }
}
