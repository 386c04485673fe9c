package io.driftgraph.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The acceptance check: a retrieval stored by the Python local search, read back from the JVM. */
class RetrievalTest {
    static TestIndex index;

    @BeforeAll
    static void setUp() {
        index = TestIndex.get();
    }

    private static Map<String, Map<String, Object>> pythonItems(String status) {
        Map<String, Map<String, Object>> out = new TreeMap<>();
        for (Map<String, Object> item : index.pythonItems()) {
            if (status.equals(item.get("status"))) {
                out.put(item.get("source") + ":" + item.get("id"), item);
            }
        }
        return out;
    }

    @Test
    void includedItemsAreExactlyThoseThePythonTraceLists() {
        Retrieval r = index.client.retrieval(index.retrievalId());
        Map<String, Map<String, Object>> expected = pythonItems("included");
        assertFalse(expected.isEmpty(), "the Python local search included nothing: " + index.python.get("trace"));
        Set<String> got = r.included().stream().map(Retrieval.Item::key).collect(Collectors.toCollection(TreeSet::new));
        assertEquals(expected.keySet(), got);
        assertEquals(r.included().size(), got.size(), "an item is included twice");
        for (Retrieval.Item item : r.included()) {
            Map<String, Object> py = expected.get(item.key());
            assertEquals(((Number) py.get("tokens")).longValue(), item.tokens(), item.key() + " tokens");
            if (py.get("rank") != null) {
                assertEquals(((Number) py.get("rank")).longValue(), item.rank(), item.key() + " rank");
            }
        }
    }

    @Test
    void includedTokensAddUpToWhatThePythonTraceCounted() {
        Retrieval r = index.client.retrieval(index.retrievalId());
        long expected = pythonItems("included").values().stream()
                .mapToLong(i -> ((Number) i.get("tokens")).longValue()).sum();
        assertEquals(expected, r.includedTokens());
    }

    @Test
    void droppedItemsAreDroppedInThePythonTraceWithTheSameReason() {
        Retrieval r = index.client.retrieval(index.retrievalId());
        Map<String, Map<String, Object>> dropped = pythonItems("dropped");
        Map<String, Object> entry = index.pythonEntry().stream()
                .filter(e -> "dropped".equals(e.get("status")))
                .collect(Collectors.toMap(e -> String.valueOf(e.get("id")), e -> String.valueOf(e.get("reason")),
                        (a, b) -> a));
        for (Retrieval.Item item : r.dropped()) {
            if ("entry".equals(item.source())) {
                assertEquals(entry.get(item.id()), item.reason(), "entry " + item.id());
            } else {
                assertTrue(dropped.containsKey(item.key()), item.key() + " is not dropped in the Python trace");
                assertEquals(dropped.get(item.key()).get("reason"), item.reason(), item.key());
            }
        }
    }

    @Test
    void propertiesAreDecodedAndNameTheQuery() {
        Retrieval r = index.client.retrieval(index.retrievalId());
        assertEquals("local", r.properties().get("mode"));
        assertEquals(index.python.get("question"), r.properties().get("query"));
        assertTrue(r.properties().get("params") instanceof Map, "params is decoded from its JSON string");
        assertTrue(r.properties().get("created_at") instanceof String);
        assertTrue(r.steps().isEmpty(), "a local search has no DRIFT steps");
    }

    @Test
    void everyItemPointsAtTheNodeItNames() {
        Retrieval r = index.client.retrieval(index.retrievalId());
        Map<String, String> label = Map.of("chunk", "Chunk", "entity", "__Entity__", "report", "__Community__",
                "claim", "Claim", "relationship", "__Entity__", "entry", "__Entity__");
        for (Retrieval.Item item : r.included()) {
            assertTrue(item.labels().contains(label.get(item.source())), item + " points at " + item.labels());
            if (!"relationship".equals(item.source())) {
                assertEquals(item.id(), item.nodeId(), item.key());
            }
        }
    }

    @Test
    void unknownRetrievalIsAOneLineError() {
        ClientException e = assertThrows(ClientException.class, () -> index.client.retrieval("no-such-retrieval"));
        assertTrue(e.getMessage().contains("no-such-retrieval"), e.getMessage());
    }

    @Test
    void commandLinePrintsTheRetrievalAsJson() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Main.run(new String[] {"--root", index.root.toString(), "retrieval", index.retrievalId()},
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8),
                System.getenv());
        assertEquals(0, code, err.toString(StandardCharsets.UTF_8));
        @SuppressWarnings("unchecked")
        Map<String, Object> json = new ObjectMapper().readValue(out.toString(StandardCharsets.UTF_8), Map.class);
        assertEquals(index.retrievalId(), json.get("retrieval_id"));
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> included = (List<Map<String, Object>>) json.get("included");
        Set<String> keys = included.stream().map(i -> i.get("source") + ":" + i.get("id"))
                .collect(Collectors.toCollection(TreeSet::new));
        assertEquals(pythonItems("included").keySet(), keys);
    }

    @Test
    void commandLineExitsOneWithAReasonForAnUnknownId() {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Main.run(new String[] {"retrieval", "nope-123"}, new PrintStream(new ByteArrayOutputStream()),
                new PrintStream(err, true, StandardCharsets.UTF_8), System.getenv());
        assertEquals(1, code);
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("nope-123"));
    }
}
