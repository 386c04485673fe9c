package io.driftgraph.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The command line's usage errors, all caught before any connection (no database needed). */
class MainTest {
    /** A Neo4j address nothing listens on: reaching it would be an error of a different kind (exit 1). */
    static final Map<String, String> NOWHERE = Map.of("NEO4J_URI", "bolt://127.0.0.1:9", "NEO4J_PASSWORD", "x");

    private record Result(int code, String out, String err) {}

    private static Result run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = Main.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8), NOWHERE);
        return new Result(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void helpGoesToStdoutWithExitZero() {
        Result r = run("--help");
        assertEquals(0, r.code());
        assertTrue(r.out().contains("retrieval ID") && r.out().contains("--rels-per-entity"), r.out());
    }

    @Test
    void usageErrorsExitTwoAndNameTheProblem(@TempDir Path dir) throws Exception {
        Path vector = dir.resolve("v.json");
        Files.writeString(vector, "[0.1, 0.2]");
        String v = vector.toString();
        assertUsage(run(), "no command");
        assertUsage(run("frobnicate"), "unknown command 'frobnicate'");
        assertUsage(run("expand", "--vector-file", v, "--rels-per-entitty", "3", "e1"), "--rels-per-entitty");
        assertUsage(run("expand", "--vector-file", v), "at least one entity id");
        assertUsage(run("expand", "--vector-file", v, "--max-level", "two", "e1"), "--max-level");
        assertUsage(run("entities"), "--vector-file is required");
        assertUsage(run("entities", "--vector-file", v, "--k", "many"), "--k");
        assertUsage(run("retrieval"), "exactly one retrieval ID");
        assertUsage(run("retrieval", "a", "b"), "exactly one retrieval ID");
        assertUsage(run("retrieval", "--k"), "--k needs a value");
    }

    @Test
    void badVectorFilesAndAnUnreachableDatabaseExitOneOnOneLine(@TempDir Path dir) throws Exception {
        Path notJson = dir.resolve("bad.json");
        Files.writeString(notJson, "{\"not\": \"a vector\"}");
        Result bad = run("entities", "--vector-file", notJson.toString());
        assertEquals(1, bad.code());
        assertTrue(bad.err().contains("array of numbers"), bad.err());
        Result missing = run("entities", "--vector-file", dir.resolve("nope.json").toString());
        assertEquals(1, missing.code());
        assertTrue(missing.err().contains("nope.json"), missing.err());
        Result down = run("retrieval", "local-x");
        assertEquals(1, down.code());
        assertTrue(down.err().startsWith("error: Neo4j is not reachable at bolt://127.0.0.1:9"), down.err());
        assertEquals(1, down.err().strip().lines().count(), down.err());
    }

    private static void assertUsage(Result r, String needle) {
        assertEquals(2, r.code(), r.err());
        assertTrue(r.err().contains(needle), "expected '" + needle + "' in: " + r.err());
        assertTrue(r.err().contains("usage:"), r.err());
    }
}
