package io.driftgraph.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** A DRIFT retrieval stored by the Python side, read back from the JVM: the step tree and its items. */
class DriftStepsTest {
    static Map<String, Object> python;
    static Retrieval stored;

    @BeforeAll
    static void setUp() {
        TestIndex index = TestIndex.get();
        python = index.drift();
        stored = index.client.retrieval(String.valueOf(python.get("retrieval_id")));
    }

    private static List<Map<String, Object>> pythonSteps() {
        return DriftgraphClient.asList(python.get("steps")).stream().map(DriftgraphClient::asMap).toList();
    }

    @Test
    void theStepTreeIsTheOneThePythonRunReported() {
        List<Map<String, Object>> steps = stored.steps();
        assertFalse(steps.isEmpty(), "no DRIFT steps stored");
        Map<Object, Map<String, Object>> byId = new HashMap<>();
        steps.forEach(s -> byId.put(s.get("id"), s));
        Map<Object, Map<String, Object>> byStepId = new HashMap<>();
        steps.forEach(s -> byStepId.put(s.get("step_id"), s));
        assertEquals(steps.size(), byStepId.size(), "a step comes twice");
        assertEquals(pythonSteps().stream().map(s -> s.get("id")).collect(Collectors.toCollection(TreeSet::new)),
                new TreeSet<>(byStepId.keySet()));
        for (Map<String, Object> py : pythonSteps()) {
            Map<String, Object> s = byStepId.get(py.get("id"));
            assertEquals(py.get("query"), s.get("query"), "query of " + py.get("id"));
            assertEquals(((Number) py.get("depth")).longValue(), ((Number) s.get("depth")).longValue());
            assertEquals(py.get("status"), s.get("status"), "status of " + py.get("id"));
            Object parent = s.get("parent") == null ? null : byId.get(s.get("parent")).get("step_id");
            assertEquals(py.get("parent"), parent, "parent of " + py.get("id"));
        }
    }

    @Test
    void everyRunStepCarriesTheItemsItsLocalSearchIncluded() {
        Map<Object, Map<String, Object>> byStepId = new HashMap<>();
        stored.steps().forEach(s -> byStepId.put(s.get("step_id"), s));
        int checked = 0;
        for (Map<String, Object> py : pythonSteps()) {
            if ("done".equals(py.get("status")) && py.get("included") instanceof Number n) {
                List<Object> items = DriftgraphClient.asList(byStepId.get(py.get("id")).get("included"));
                assertEquals(n.intValue(), items.size(), "items of step " + py.get("id"));
                checked++;
            }
        }
        assertTrue(checked > 0, "no run step reported its included items");
    }

    @Test
    void theRetrievalIncludesExactlyTheItemsOfItsTrace() {
        Set<String> expected = DriftgraphClient.asList(DriftgraphClient.asMap(python.get("trace")).get("items"))
                .stream().map(DriftgraphClient::asMap).filter(i -> "included".equals(i.get("status")))
                .map(i -> i.get("source") + ":" + i.get("id")).collect(Collectors.toCollection(TreeSet::new));
        assertFalse(expected.isEmpty());
        assertEquals(expected,
                stored.included().stream().map(Retrieval.Item::key).collect(Collectors.toCollection(TreeSet::new)));
        assertEquals("drift", stored.properties().get("mode"));
        assertEquals(python.get("stop_reason"), stored.properties().get("stop_reason"));
    }
}
