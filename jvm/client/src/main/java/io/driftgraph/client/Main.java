package io.driftgraph.client;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code java -jar driftgraph-client.jar COMMAND ...}: read a driftgraph index from the JVM and print JSON.
 *
 * <pre>
 *   retrieval ID                        a stored retrieval: included/dropped items, DRIFT steps
 *   entities --vector-file F [--k N]    entities nearest to an embedding
 *   expand --vector-file F ENTITY_ID... local-search expansion candidates with n_tokens and signals
 * </pre>
 * See {@link #USAGE} for every option. Exit codes: 0 ok, 1 an error explained on one line, 2 bad usage.
 */
public final class Main {
    static final String USAGE = String.join("\n",
            "usage: driftgraph-client [--root DIR] [--database NAME] COMMAND ...",
            "  retrieval ID                   a stored retrieval as JSON: included/dropped items, DRIFT steps",
            "  entities --vector-file F [--k N]",
            "                                 the N (10) entities nearest to an embedding",
            "  expand --vector-file F [--seed-ids A,B] [--chunk-ids ..] [--report-ids ..] [--exclude-ids ..]",
            "         [--exclude-titles ..] [--max-df 25] [--per-entity 25] [--rels-per-entity 10]",
            "         [--max-level 2] [--entity-seeds 1] ENTITY_ID...",
            "                                 local-search expansion: candidates with n_tokens and signals",
            "A vector file is a JSON array of numbers ('-' reads stdin), made by the index's embedder.",
            "Neo4j from NEO4J_URI, NEO4J_USERNAME, NEO4J_PASSWORD, NEO4J_DATABASE; statements from",
            "--root, -Ddriftgraph.root or DRIFTGRAPH_ROOT (the checkout that holds cypher/).");

    static final Set<String> GLOBAL_FLAGS = Set.of("root", "database", "help");
    static final Map<String, Set<String>> COMMAND_FLAGS = Map.of(
            "retrieval", Set.of(),
            "entities", Set.of("vector-file", "k"),
            "expand", Set.of("vector-file", "seed-ids", "chunk-ids", "report-ids", "exclude-ids", "exclude-titles",
                    "max-df", "per-entity", "rels-per-entity", "max-level", "entity-seeds"));

    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

    private Main() {}

    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err, System.getenv()));
    }

    /** The whole program; returns the exit code (0 ok, 1 error, 2 usage). */
    public static int run(String[] args, PrintStream out, PrintStream err, Map<String, String> env) {
        Args a;
        try {
            a = Args.parse(args);
        } catch (IllegalArgumentException e) {
            err.println("error: " + e.getMessage());
            err.println(USAGE);
            return 2;
        }
        if (a.flags.containsKey("help")) {
            out.println(USAGE);
            return 0;
        }
        if (a.command == null || !COMMAND_FLAGS.containsKey(a.command)) {
            err.println(a.command == null ? "error: no command" : "error: unknown command '" + a.command + "'");
            err.println(USAGE);
            return 2;
        }
        for (String flag : a.flags.keySet()) {
            if (!GLOBAL_FLAGS.contains(flag) && !COMMAND_FLAGS.get(a.command).contains(flag)) {
                err.println("error: " + a.command + " has no option --" + flag);
                err.println(USAGE);
                return 2;
            }
        }
        try {
            // everything checkable without the database first: a typo never waits for a connection
            String id = a.command.equals("retrieval") ? a.single("retrieval ID") : null;
            List<Double> vector = a.command.equals("retrieval") ? null : vector(a);
            int k = a.intFlag("k", 10);
            Expansion.Options options = Expansion.Options.fromFlags(a.flags);
            if (a.command.equals("expand") && a.positional.isEmpty()) {
                throw new IllegalArgumentException("expand needs at least one entity id");
            }
            if (a.command.equals("entities") && !a.positional.isEmpty()) {
                throw new IllegalArgumentException("entities takes no arguments, got " + a.positional);
            }
            CypherFiles cypher = a.flags.containsKey("root")
                    ? new CypherFiles(Path.of(a.flags.get("root")))
                    : CypherFiles.fromEnvironment();
            Map<String, String> vars = new LinkedHashMap<>(env);
            if (a.flags.containsKey("database")) {
                vars.put("NEO4J_DATABASE", a.flags.get("database"));
            }
            try (DriftgraphClient client = DriftgraphClient.connect(Connection.fromMap(vars), cypher)) {
                Object result = switch (a.command) {
                    case "retrieval" -> client.retrieval(id).toMap();
                    case "entities" -> client.entitiesByVector(vector, k);
                    default -> client.expand(a.positional, vector, options).toMap();
                };
                out.println(JSON.writeValueAsString(result));
            }
            return 0;
        } catch (IllegalArgumentException e) {
            err.println("error: " + e.getMessage());
            err.println(USAGE);
            return 2;
        } catch (ClientException | IOException e) {
            err.println("error: " + e.getMessage());
            return 1;
        }
    }

    static List<Double> vector(Args a) throws IOException {
        String file = a.flags.get("vector-file");
        if (file == null) {
            throw new IllegalArgumentException("--vector-file is required (a JSON array of numbers, or '-')");
        }
        String text;
        try {
            text = "-".equals(file)
                    ? new String(System.in.readAllBytes(), StandardCharsets.UTF_8)
                    : Files.readString(Path.of(file), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new ClientException("cannot read the vector file " + file + ": " + e);
        }
        try {
            Object parsed = new ObjectMapper().readValue(text, Object.class);
            if (parsed instanceof List<?> list && !list.isEmpty()
                    && list.stream().allMatch(x -> x instanceof Number)) {
                return list.stream().map(x -> ((Number) x).doubleValue()).toList();
            }
        } catch (JsonProcessingException e) {
            throw new ClientException(file + ": not JSON (" + e.getOriginalMessage() + ")");
        }
        throw new ClientException(file + ": expected a non-empty JSON array of numbers");
    }

    /** Flags ({@code --name value}, {@code --name=value}, {@code --help}), a command, positional words. */
    static final class Args {
        String command;
        final Map<String, String> flags = new LinkedHashMap<>();
        final List<String> positional = new ArrayList<>();

        static Args parse(String[] args) {
            Args a = new Args();
            for (int i = 0; i < args.length; i++) {
                String s = args[i];
                if (s.equals("--help") || s.equals("-h")) {
                    a.flags.put("help", "");
                } else if (s.startsWith("--")) {
                    int eq = s.indexOf('=');
                    if (eq > 0) {
                        a.flags.put(s.substring(2, eq), s.substring(eq + 1));
                    } else if (i + 1 < args.length) {
                        a.flags.put(s.substring(2), args[++i]);
                    } else {
                        throw new IllegalArgumentException(s + " needs a value");
                    }
                } else if (a.command == null) {
                    a.command = s;
                } else {
                    a.positional.add(s);
                }
            }
            return a;
        }

        String single(String what) {
            if (positional.size() != 1) {
                throw new IllegalArgumentException(command + " needs exactly one " + what);
            }
            return positional.get(0);
        }

        int intFlag(String name, int fallback) {
            String v = flags.get(name);
            if (v == null) {
                return fallback;
            }
            try {
                return Integer.parseInt(v);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("--" + name + " must be an integer, got '" + v + "'");
            }
        }
    }
}
