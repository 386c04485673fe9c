package io.driftgraph.client;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Named Cypher statements read from the repository's {@code cypher/} folder: the very files the Python
 * code runs, so the JVM side cannot drift from them. {@code load("query/x")} reads {@code cypher/query/x.cypher}.
 */
public final class CypherFiles {
    /** System property naming the repository root (the folder that holds {@code cypher/}). */
    public static final String ROOT_PROPERTY = "driftgraph.root";
    /** Environment variable naming the repository root, used when the property is unset. */
    public static final String ROOT_ENV = "DRIFTGRAPH_ROOT";

    private static final Pattern PARAM = Pattern.compile("\\$([A-Za-z_][A-Za-z0-9_]*)");
    private static final Pattern LITERAL_OR_COMMENT =
            Pattern.compile("'(?:[^'\\\\]|\\\\.)*'|\"(?:[^\"\\\\]|\\\\.)*\"|//[^\\n]*|/\\*.*?\\*/", Pattern.DOTALL);

    private final Path dir;
    private final Map<String, String> cache = new ConcurrentHashMap<>();

    /** Statements under {@code root/cypher}. */
    public CypherFiles(Path root) {
        this.dir = root.resolve("cypher").toAbsolutePath().normalize();
        if (!Files.isDirectory(dir)) {
            throw new ClientException("no cypher/ folder under " + root.toAbsolutePath().normalize()
                    + ": set -D" + ROOT_PROPERTY + " or " + ROOT_ENV + " to the driftgraph checkout");
        }
    }

    /** The root from {@code -Ddriftgraph.root}, else {@code DRIFTGRAPH_ROOT}, else the nearest parent with cypher/. */
    public static CypherFiles fromEnvironment() {
        String root = System.getProperty(ROOT_PROPERTY);
        if (root == null || root.isBlank()) {
            root = System.getenv(ROOT_ENV);
        }
        if (root != null && !root.isBlank()) {
            return new CypherFiles(Path.of(root));
        }
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            if (Files.isDirectory(p.resolve("cypher"))) {
                return new CypherFiles(p);
            }
        }
        throw new ClientException("cannot find the driftgraph cypher/ folder: set -D" + ROOT_PROPERTY
                + " or " + ROOT_ENV + " to the checkout");
    }

    /** The folder the statements are read from. */
    public Path dir() {
        return dir;
    }

    /** The text of one named statement, trimmed (as Python's {@code cypher.load}). */
    public String load(String name) {
        return cache.computeIfAbsent(name, this::read);
    }

    /** A file of several statements, each ended by ';' at a line end (schema files). */
    public String[] statements(String name) {
        return Arrays.stream(load(name).split(";\\s*(?:\\n|$)"))
                .map(String::strip)
                .filter(s -> !s.isEmpty())
                .toArray(String[]::new);
    }

    /** The {@code $parameters} a statement uses (outside string literals and comments). */
    public Set<String> parameters(String name) {
        String code = LITERAL_OR_COMMENT.matcher(load(name)).replaceAll(" ");
        Set<String> names = new TreeSet<>();
        Matcher m = PARAM.matcher(code);
        while (m.find()) {
            names.add(m.group(1));
        }
        return names;
    }

    private String read(String name) {
        if (name.contains("..") || name.startsWith("/")) {
            throw new ClientException("bad statement name '" + name + "'");
        }
        Path file = dir.resolve(name + ".cypher");
        if (!Files.isRegularFile(file)) {
            throw new ClientException("no Cypher statement named '" + name + "' (" + file + ")");
        }
        try {
            return Files.readString(file, StandardCharsets.UTF_8).strip();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
    }
}
