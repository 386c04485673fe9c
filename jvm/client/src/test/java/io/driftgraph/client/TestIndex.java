package io.driftgraph.client;

import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;

/**
 * The shared test fixture: a real Neo4j (NEO4J_URI / NEO4J_PASSWORD) holding operation-dulce, imported by the
 * Python CLI, and one local search run by the Python CLI whose JSON output is what the Java side checks
 * against. With {@code -Ddriftgraph.trace=FILE} (a {@code driftgraph query local --json} output made by a
 * script) the Python steps are skipped. Without a Neo4j the tests fail when CI is set and skip otherwise.
 */
final class TestIndex {
    static final String QUESTION = "What is Operation: Dulce and who leads the team?";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static TestIndex shared;

    final Path root;
    final CypherFiles cypher;
    final DriftgraphClient client;
    final Map<String, Object> python;
    private List<Double> questionVector;
    private Map<String, Object> drift;

    private TestIndex(Path root, CypherFiles cypher, DriftgraphClient client, Map<String, Object> python) {
        this.root = root;
        this.cypher = cypher;
        this.client = client;
        this.python = python;
    }

    /** The fixture, built once per test JVM. */
    static synchronized TestIndex get() {
        if (shared == null) {
            shared = build();
            Runtime.getRuntime().addShutdownHook(new Thread(shared.client::close));
        }
        return shared;
    }

    /** A client on the test Neo4j, or a failure (CI) / skip (elsewhere) when there is none. */
    static DriftgraphClient connectOrSkip(CypherFiles cypher) {
        Connection connection = Connection.fromEnvironment();
        if (System.getenv("NEO4J_URI") == null) {
            unavailable("NEO4J_URI is not set (start one with `driftgraph neo4j start` and export NEO4J_URI)");
        }
        try {
            return DriftgraphClient.connect(connection, cypher);
        } catch (ClientException e) {
            unavailable(e.getMessage());
            throw e;
        }
    }

    static void unavailable(String why) {
        String ci = System.getenv("CI");
        if (ci != null && !ci.isBlank() && !ci.equals("0") && !ci.equalsIgnoreCase("false")) {
            fail("no Neo4j for the JVM client tests: " + why);
        }
        Assumptions.abort("no Neo4j: " + why);
    }

    static Path root() {
        return CypherFiles.fromEnvironment().dir().getParent();
    }

    private static TestIndex build() {
        CypherFiles cypher = CypherFiles.fromEnvironment();
        Path root = cypher.dir().getParent();
        DriftgraphClient client = connectOrSkip(cypher);
        String given = System.getProperty("driftgraph.trace");
        Path traceFile = given != null && !given.isBlank() ? Path.of(given) : runPython(root);
        try {
            @SuppressWarnings("unchecked")
            Map<String, Object> python = JSON.readValue(traceFile.toFile(), Map.class);
            return new TestIndex(root, cypher, client, python);
        } catch (IOException e) {
            client.close();
            throw new AssertionError("cannot read the Python trace " + traceFile + ": " + e.getMessage(), e);
        }
    }

    /** Import operation-dulce and run one local search with the Python CLI; returns its --json output. */
    private static Path runPython(Path root) {
        Path data = root.resolveSibling("shared").resolve("data").resolve("operation-dulce");
        if (!Files.isDirectory(data)) {
            unavailable("shared data not found at " + data);
        }
        try {
            Path work = Files.createTempDirectory("driftgraph-jvm-");
            String cli = driftgraphCommand(root);
            run(work, List.of(cli, "import-graphrag", data.toString(), "--reset"), work.resolve("import.out"));
            Path out = work.resolve("local.json");
            run(work, List.of(cli, "query", "local", QUESTION, "--context-only", "--json"), out);
            return out;
        } catch (IOException e) {
            throw new AssertionError("cannot run the Python CLI: " + e.getMessage(), e);
        }
    }

    /** A fresh {@code driftgraph query local QUESTION --context-only --json} on the current index, parsed. */
    @SuppressWarnings("unchecked")
    Map<String, Object> queryLocal() {
        try {
            Path work = Files.createTempDirectory("driftgraph-jvm-");
            Path out = work.resolve("local.json");
            run(work, List.of(driftgraphCommand(root), "query", "local", QUESTION, "--context-only", "--json"), out);
            return JSON.readValue(out.toFile(), Map.class);
        } catch (IOException e) {
            throw new AssertionError("cannot run the Python CLI: " + e.getMessage(), e);
        }
    }

    /** {@code -Ddriftgraph.cli}, else the checkout's .venv, else {@code driftgraph} on the PATH. */
    static String driftgraphCommand(Path root) {
        String given = System.getProperty("driftgraph.cli");
        if (given != null && !given.isBlank()) {
            return given;
        }
        String venv = System.getenv("DRIFTGRAPH_VENV");
        for (Path candidate : new Path[] {
                venv == null ? null : Path.of(venv, "bin", "driftgraph"), root.resolve(".venv/bin/driftgraph")}) {
            if (candidate != null && Files.isExecutable(candidate)) {
                return candidate.toString();
            }
        }
        return "driftgraph";
    }

    private static void run(Path cwd, List<String> command, Path stdout) throws IOException {
        Path stderr = stdout.resolveSibling(stdout.getFileName() + ".err");
        Process p = new ProcessBuilder(new ArrayList<>(command))
                .directory(cwd.toFile())
                .redirectOutput(stdout.toFile())
                .redirectError(stderr.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .start();
        try {
            if (!p.waitFor(600, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                fail(String.join(" ", command) + ": no exit after 600 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            p.destroyForcibly();
            fail("interrupted while running " + command);
        }
        if (p.exitValue() != 0) {
            fail(String.join(" ", command) + " exited " + p.exitValue() + ":\n"
                    + Files.readString(stderr, StandardCharsets.UTF_8));
        }
    }

    Map<String, Object> python() {
        return python;
    }

    /** The embedding of the Python run's question by the Python side's configured embedder (what its search used). */
    synchronized List<Double> questionVector() {
        if (questionVector == null) {
            Path script = root.resolve("jvm/client/src/test/resources/embed_question.py");
            try {
                Path work = Files.createTempDirectory("driftgraph-jvm-");
                Path out = work.resolve("vector.json");
                run(work, List.of(pythonCommand(), script.toString(),
                        String.valueOf(python().get("question"))), out);
                questionVector = JSON.readerForListOf(Double.class).readValue(out.toFile());
            } catch (IOException e) {
                throw new AssertionError("cannot embed the question: " + e.getMessage(), e);
            }
        }
        return questionVector;
    }

    /**
     * A DRIFT search on the same index ({@code driftgraph query drift --json}) against the project's fake
     * OpenAI-compatible server; {@code -Ddriftgraph.drift-trace=FILE} gives a ready output instead.
     */
    @SuppressWarnings("unchecked")
    synchronized Map<String, Object> drift() {
        if (drift == null) {
            String given = System.getProperty("driftgraph.drift-trace");
            try {
                Path file;
                if (given != null && !given.isBlank()) {
                    file = Path.of(given);
                } else {
                    Path work = Files.createTempDirectory("driftgraph-jvm-");
                    file = work.resolve("drift.json");
                    Path script = root.resolve("jvm/client/src/test/resources/drift_run.py");
                    run(work, List.of(pythonCommand(), script.toString(), root.toString(),
                            String.valueOf(python.get("question"))), file);
                }
                drift = JSON.readValue(file.toFile(), Map.class);
            } catch (IOException e) {
                throw new AssertionError("cannot run or read the DRIFT search: " + e.getMessage(), e);
            }
        }
        return drift;
    }

    /** The venv's python next to the driftgraph command, else python3. */
    String pythonCommand() {
        Path python = Path.of(driftgraphCommand(root)).resolveSibling("python");
        return Files.isExecutable(python) ? python.toString() : "python3";
    }

    /** {@code retrieval_id} of the Python run. */
    String retrievalId() {
        Object id = python.get("retrieval_id");
        if (!(id instanceof String s) || s.isBlank()) {
            fail("the Python output has no retrieval_id (is tracing off?): " + python.keySet());
        }
        return (String) id;
    }

    /** {@code trace.items} of the Python run. */
    @SuppressWarnings("unchecked")
    List<Map<String, Object>> pythonItems() {
        Map<String, Object> trace = (Map<String, Object>) python.get("trace");
        return (List<Map<String, Object>>) trace.get("items");
    }

    @SuppressWarnings("unchecked")
    List<Map<String, Object>> pythonEntry() {
        Map<String, Object> trace = (Map<String, Object>) python.get("trace");
        return (List<Map<String, Object>>) trace.get("entry");
    }
}
