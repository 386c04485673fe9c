package io.driftgraph.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Entry and expansion from the JVM with the Python run's own inputs (its question vector, kept entry points
 * and settings): Java must reach every item the Python trace considered. (Trace tokens are those of the
 * rendered row, a few more than the stored {@code n_tokens}, so they are not compared here.)
 */
class ExpansionTest {
    static TestIndex index;
    static Retrieval stored;

    @BeforeAll
    static void setUp() {
        index = TestIndex.get();
        stored = index.client.retrieval(index.retrievalId());
    }

    private static List<String> entryIds(String kind, boolean keptOnly) {
        List<String> ids = new ArrayList<>();
        for (Map<String, Object> e : index.pythonEntry()) {
            if (kind.equals(e.getOrDefault("kind", "entity")) && (!keptOnly || "kept".equals(e.get("status")))) {
                ids.add(String.valueOf(e.get("id")));
            }
        }
        return ids;
    }

    private static int setting(String key) {
        Object v = DriftgraphClient.asMap(stored.properties().get("params")).get(key);
        if (!(v instanceof Number n)) {
            throw new AssertionError("the stored retrieval's params have no number '" + key + "': "
                    + stored.properties().get("params"));
        }
        return n.intValue();
    }

    /** The inputs the Python local search gave cypher/query/local_expand (see driftgraph/query/local.py). */
    static Expansion.Options pythonOptions() {
        List<String> exclude = DriftgraphClient.asList(DriftgraphClient.asMap(stored.properties().get("params"))
                .get("exclude")).stream().map(String::valueOf).toList();
        List<String> excludeIds = new ArrayList<>(exclude);
        index.pythonEntry().stream().filter(e -> "excluded".equals(e.get("reason")))
                .forEach(e -> excludeIds.add(String.valueOf(e.get("id"))));
        List<String> keptChunks = entryIds("chunk", true);
        return Expansion.Options.defaults()
                .withHits(keptChunks.subList(0, Math.min(setting("seed_chunks"), keptChunks.size())),
                        entryIds("chunk", false), entryIds("report", true))
                .withExcluded(excludeIds, exclude)
                .withLimits(setting("hop_max_chunks_per_entity"), setting("entity_chunks"),
                        setting("relationships_per_entity"), setting("max_community_level"))
                .withEntitySeeds(setting("entity_seed_chunks"));
    }

    @Test
    void entryFromJavaRanksEntitiesAndChunksAsThePythonTraceDid() {
        Map<String, Object> row = index.client.entry(index.questionVector(), 60, "", 1, 100, 10);
        List<Map<String, Object>> entities = DriftgraphClient.asList(row.get("entity_vector")).stream()
                .map(DriftgraphClient::asMap).toList();
        int checked = 0;
        for (Map<String, Object> e : index.pythonEntry()) {
            if ("entity".equals(e.getOrDefault("kind", "entity")) && e.get("vector_rank") instanceof Number rank) {
                Map<String, Object> hit = entities.get(rank.intValue() - 1);
                assertEquals(e.get("id"), hit.get("id"), "vector rank " + rank);
                assertEquals(((Number) e.get("similarity")).doubleValue(),
                        ((Number) hit.get("similarity")).doubleValue(), 1e-5, "similarity of " + e.get("id"));
                checked++;
            }
        }
        assertTrue(checked > 0, "the Python trace lists no vector-ranked entry entity");
        Map<Object, Double> chunkSim = DriftgraphClient.asList(row.get("chunk_vector")).stream()
                .map(DriftgraphClient::asMap)
                .collect(Collectors.toMap(c -> c.get("id"), c -> ((Number) c.get("similarity")).doubleValue()));
        for (Map<String, Object> e : index.pythonEntry()) {
            if ("chunk".equals(e.get("kind"))) {
                assertEquals(((Number) e.get("similarity")).doubleValue(), chunkSim.get(e.get("id")), 1e-5);
            }
        }
        Map<String, Object> present = DriftgraphClient.asMap(row.get("present"));
        assertEquals(Boolean.TRUE, present.get("chunk"));
        assertEquals(Boolean.TRUE, present.get("report"));
    }

    @Test
    void javaExpansionReachesEveryItemThePythonTraceConsidered() {
        Expansion x = index.client.expand(entryIds("entity", true), index.questionVector(), pythonOptions());
        Map<String, Expansion.Candidate> byKey = new HashMap<>();
        x.candidates().forEach(c -> byKey.put(c.source() + ":" + c.id(), c));
        assertEquals(x.candidates().size(), byKey.size(), "a candidate comes twice");
        for (Map<String, Object> item : index.pythonItems()) {
            String key = item.get("source") + ":" + item.get("id");
            assertTrue(byKey.containsKey(key), key + " (" + item.get("status") + ", hop " + item.get("hop")
                    + ") is in the Python trace but not among the Java expansion's candidates");
        }
        for (String source : List.of("entity", "relationship", "chunk")) {
            assertFalse(x.of(source).isEmpty(), "no " + source + " candidates");
        }
    }

    @Test
    void candidatesCarryTokensAndTheSignalsThatRankThem() {
        Expansion x = index.client.expand(entryIds("entity", true), index.questionVector(), pythonOptions());
        for (Expansion.Candidate c : x.candidates()) {
            if (!c.source().equals("claim")) {
                assertTrue(c.nTokens() != null && c.nTokens() > 0, c.source() + " " + c.id() + " has no n_tokens");
            }
        }
        x.of("entity").forEach(c -> assertTrue(c.signals().containsKey("entry_rank"), c.id()));
        x.of("relationship").forEach(c -> assertTrue(c.signals().containsKey("weight")
                && c.signals().containsKey("in_network"), c.id()));
        x.of("report").forEach(c -> assertTrue(c.signals().get("similarity") instanceof Number
                && c.signals().containsKey("matched") && c.signals().containsKey("rank"), c.id()));
        for (Expansion.Candidate c : x.of("chunk")) {
            double sim = ((Number) c.signals().get("similarity")).doubleValue();
            assertTrue(sim >= -1 && sim <= 1, c.id());
            boolean reached = (Boolean) c.signals().get("vector_hit")
                    || !((List<?>) c.signals().get("entity_ids")).isEmpty()
                    || !((List<?>) c.signals().get("seed_links")).isEmpty();
            assertTrue(reached, "chunk " + c.id() + " says nothing about how it was reached");
        }
    }

    @Test
    void commandLineExpandsAndLooksUpEntitiesFromAVectorFile(@org.junit.jupiter.api.io.TempDir Path dir)
            throws Exception {
        Path vector = dir.resolve("q.json");
        Files.writeString(vector, new ObjectMapper().writeValueAsString(index.questionVector()));
        List<String> entities = entryIds("entity", true);
        List<String> args = new ArrayList<>(List.of("--root", index.root.toString(), "expand",
                "--vector-file", vector.toString(), "--rels-per-entity", "2"));
        args.addAll(entities);
        Map<String, Object> json = runMain(args.toArray(String[]::new));
        Map<String, Object> counts = DriftgraphClient.asMap(json.get("counts"));
        assertEquals((long) entities.size(), ((Number) counts.get("entity")).longValue());
        assertTrue(((Number) counts.get("relationship")).longValue() <= 2L * entities.size());

        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int code = Main.run(new String[] {"entities", "--vector-file", vector.toString(), "--k", "3"},
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(new ByteArrayOutputStream()),
                System.getenv());
        assertEquals(0, code);
        List<?> hits = new ObjectMapper().readValue(out.toString(StandardCharsets.UTF_8), List.class);
        assertEquals(3, hits.size());
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> runMain(String[] args) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Main.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), System.getenv());
        assertEquals(0, code, err.toString(StandardCharsets.UTF_8));
        return new ObjectMapper().readValue(out.toString(StandardCharsets.UTF_8), Map.class);
    }
}
