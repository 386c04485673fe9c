package io.driftgraph.launcher;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;

import org.neo4j.configuration.GraphDatabaseInternalSettings;
import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.connectors.HttpsConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.io.ByteUnit;
import org.neo4j.server.configuration.ServerSettings;

/**
 * Runs Neo4j Community embedded with a Bolt connector and an HTTP connector (Neo4j Browser, discovery,
 * HTTP API) bound to the loopback interface only, with APOC core. CORS grants only the Browser's own origin
 * ({@code http://127.0.0.1:H}), never {@code *}.
 *
 * <p>Prints exactly one line {@code READY bolt://127.0.0.1:P http://127.0.0.1:H auth=true} ({@code http=off}
 * in place of the URL with {@code --http-port 0}) once both accept connections, shuts the database down
 * cleanly on SIGTERM, and exits non-zero with a one-line reason on failure. The password is set before
 * either connector listens (see {@link InitialPasswordExtension}). {@code --exit-when-ready} shuts down
 * right after READY (driftgraph uses it once per build to record a class-data-sharing archive).
 */
public final class Launcher {
    static final String LOOPBACK = "127.0.0.1";

    private Launcher() {}

    public static void main(String[] args) {
        Options options;
        try {
            options = Options.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("driftgraph-launcher: " + e.getMessage());
            System.exit(2);
            return;
        }
        DatabaseManagementService service;
        try {
            service = start(options);
        } catch (Exception e) {
            System.err.println("driftgraph-launcher: failed to start Neo4j: " + rootMessage(e));
            System.exit(1);
            return;
        }
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            service.shutdown();
            stopped.countDown();
        }, "driftgraph-launcher-shutdown"));
        try {
            waitForPort(options.port, Duration.ofSeconds(60));
            if (options.httpPort > 0) {
                waitForPort(options.httpPort, Duration.ofSeconds(60));
            }
        } catch (IOException e) {
            System.err.println("driftgraph-launcher: Bolt/HTTP did not accept connections: " + e.getMessage());
            System.exit(1);
        }
        String httpUrl = options.httpPort > 0 ? "http://" + LOOPBACK + ":" + options.httpPort : "http=off";
        System.out.println("READY bolt://" + LOOPBACK + ":" + options.port + " " + httpUrl
                + " auth=" + (options.password != null));
        System.out.flush();
        if (options.exitWhenReady) {
            // a training run for the class-data-sharing archive: the JVM writes it when it exits
            System.exit(0);
        }
        try {
            stopped.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static DatabaseManagementService start(Options options) {
        Path home = options.dataDir.toAbsolutePath();
        boolean http = options.httpPort > 0;
        DatabaseManagementServiceBuilder builder = new DatabaseManagementServiceBuilder(home)
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress(LOOPBACK, options.port))
                .setConfig(BoltConnector.advertised_address, new SocketAddress(LOOPBACK, options.port))
                .setConfig(HttpConnector.enabled, http)
                .setConfig(HttpsConnector.enabled, false)
                .setConfig(GraphDatabaseSettings.auth_enabled, options.password != null)
                .setConfig(GraphDatabaseSettings.pagecache_memory, ByteUnit.parse(options.pageCache))
                .setConfig(GraphDatabaseSettings.tx_state_max_off_heap_memory, ByteUnit.parse("256m"))
                // A local tool on a machine that may have no network: no usage reports, no Browser telemetry.
                .setConfig(GraphDatabaseSettings.udc_enabled, false)
                .setConfig(ServerSettings.allow_telemetry, false)
                // APOC core: its procedures load from the plugins dir; only apoc.* gets unrestricted access.
                // No allowlist: the default (*) keeps every built-in db.* / dbms.* procedure.
                .setConfig(GraphDatabaseSettings.procedure_unrestricted, List.of("apoc.*"))
                // Bolt's event loops wait 5 s twice for work that never comes once the databases are shut
                // down: no quiet period makes a stop ~10 s shorter.
                .setConfig(GraphDatabaseInternalSettings.netty_server_shutdown_quiet_period, 0);
        if (http) {
            // Neo4j's default CORS answer is "Access-Control-Allow-Origin: *": any web page the developer opens
            // could then send authenticated Cypher to this database. Only the Browser's own origin is granted.
            builder.setConfig(HttpConnector.listen_address, new SocketAddress(LOOPBACK, options.httpPort))
                    .setConfig(HttpConnector.advertised_address, new SocketAddress(LOOPBACK, options.httpPort))
                    .setConfig(ServerSettings.http_access_control_allow_origin, browserOrigin(options.httpPort));
        }
        Path plugins = options.pluginsDir != null ? options.pluginsDir : defaultPluginsDir();
        if (plugins != null) {
            builder.setConfig(GraphDatabaseSettings.plugin_dir, plugins.toAbsolutePath());
        }
        // The password is set by InitialPasswordExtension while the DBMS starts, before Bolt listens.
        InitialPasswordExtension.password = options.password;
        return builder.build();
    }

    /** The one origin the HTTP API grants by CORS: Neo4j Browser as the launcher serves it. */
    static String browserOrigin(int httpPort) {
        return "http://" + LOOPBACK + ":" + httpPort;
    }

    /** {@code plugins/} next to the launcher jar (target/plugins, filled by mvn package), if it exists. */
    private static Path defaultPluginsDir() {
        try {
            Path jar = Path.of(Launcher.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            Path dir = jar.getParent().resolve("plugins");
            return Files.isDirectory(dir) ? dir : null;
        } catch (URISyntaxException | RuntimeException e) {
            return null;
        }
    }

    private static void waitForPort(int port, Duration timeout) throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        IOException last = null;
        while (System.nanoTime() < deadline) {
            try (Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress(LOOPBACK, port), 1000);
                return;
            } catch (IOException e) {
                last = e;
                try {
                    Thread.sleep(100);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted");
                }
            }
        }
        throw last != null ? last : new IOException("timeout");
    }

    static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t.getClass().getSimpleName() + ": " + t.getMessage();
    }

    /** Command-line options; the password comes from NEO4J_PASSWORD so it never shows in ps. */
    static final class Options {
        int port = 7687;
        int httpPort = 7474;
        Path pluginsDir;
        boolean exitWhenReady;
        Path dataDir = Path.of("neo4j-data");
        String pageCache = "128m";
        String password = System.getenv("NEO4J_PASSWORD");

        static Options parse(String[] args) {
            Options o = new Options();
            for (int i = 0; i < args.length; i++) {
                String a = args[i];
                if (a.equals("--exit-when-ready")) {
                    o.exitWhenReady = true;
                    continue;
                }
                if (i + 1 >= args.length) {
                    throw new IllegalArgumentException("missing value after " + a);
                }
                String v = args[++i];
                switch (a) {
                    case "--port" -> o.port = port(a, v, false);
                    case "--http-port" -> o.httpPort = port(a, v, true);
                    case "--data-dir" -> o.dataDir = Path.of(v);
                    case "--plugins-dir" -> o.pluginsDir = Path.of(v);
                    case "--page-cache" -> o.pageCache = v;
                    default -> throw new IllegalArgumentException("unknown option " + a
                            + " (allowed: --port, --http-port, --data-dir, --plugins-dir, --page-cache,"
                            + " --exit-when-ready)");
                }
            }
            if (o.httpPort == o.port) {
                throw new IllegalArgumentException("--http-port must differ from --port (" + o.port + ")");
            }
            if (o.password != null && o.password.isEmpty()) {
                o.password = null;
            }
            if (o.password != null && o.password.length() < 8) {
                throw new IllegalArgumentException("NEO4J_PASSWORD must have at least 8 characters (Neo4j's minimum)");
            }
            return o;
        }

        private static int port(String option, String value, boolean zeroAllowed) {
            int p;
            try {
                p = Integer.parseInt(value);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(option + " must be a number, got '" + value + "'");
            }
            if (p < (zeroAllowed ? 0 : 1) || p > 65535) {
                throw new IllegalArgumentException(option + " must be in " + (zeroAllowed ? "0" : "1")
                        + "..65535" + (zeroAllowed ? " (0 turns it off)" : "") + ", got " + p);
            }
            return p;
        }
    }
}
