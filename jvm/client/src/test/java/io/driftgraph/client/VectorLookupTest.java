package io.driftgraph.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Entities by vector, on the index the Python importer wrote. */
class VectorLookupTest {
    static TestIndex index;

    @BeforeAll
    static void setUp() {
        index = TestIndex.get();
    }

    /** The stored embedding of the Python run's best kept entry entity. */
    @SuppressWarnings("unchecked")
    private static Map.Entry<String, List<Number>> storedEmbedding() {
        String id = index.pythonEntry().stream()
                .filter(e -> "kept".equals(e.get("status")) && !"chunk".equals(e.get("kind")))
                .map(e -> String.valueOf(e.get("id")))
                .findFirst()
                .orElseThrow(() -> new AssertionError("the Python run kept no entry entity"));
        List<Map<String, Object>> rows = index.client.read("tests/entity_embedding", Map.of("id", id));
        assertEquals(1, rows.size(), id);
        return Map.entry(id, (List<Number>) rows.get(0).get("embedding"));
    }

    @Test
    void anEntitysOwnEmbeddingFindsItFirst() {
        Map.Entry<String, List<Number>> e = storedEmbedding();
        List<Map<String, Object>> hits = index.client.entitiesByVector(e.getValue(), 5);
        assertEquals(5, hits.size());
        assertEquals(e.getKey(), hits.get(0).get("id"));
        assertEquals(1.0, ((Number) hits.get(0).get("similarity")).doubleValue(), 1e-3, "cosine with itself");
        for (int i = 1; i < hits.size(); i++) {
            double prev = ((Number) hits.get(i - 1).get("similarity")).doubleValue();
            assertTrue(((Number) hits.get(i).get("similarity")).doubleValue() <= prev, "best first");
        }
        assertFalse(String.valueOf(hits.get(0).get("title")).isBlank());
    }

    @Test
    void badArgumentsAreOneLineErrors() {
        assertThrows(ClientException.class, () -> index.client.entitiesByVector(List.of(), 3));
        assertThrows(ClientException.class, () -> index.client.entitiesByVector(List.of(1.0), 0));
        ClientException wrongDims = assertThrows(ClientException.class,
                () -> index.client.entitiesByVector(List.of(1.0, 0.0, 0.0), 3));
        assertTrue(wrongDims.getMessage().contains("local_entry"), wrongDims.getMessage());
    }
}
