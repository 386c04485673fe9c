package io.driftgraph.launcher;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.configuration.connectors.BoltConnector;
import org.neo4j.configuration.connectors.HttpConnector;
import org.neo4j.configuration.connectors.HttpsConnector;
import org.neo4j.configuration.helpers.SocketAddress;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.dbms.api.DatabaseManagementServiceBuilder;
import org.neo4j.io.ByteUnit;

/**
 * Runs Neo4j Community embedded with a Bolt connector bound to the loopback interface only.
 *
 * <p>Prints exactly one line starting with {@code READY} once Bolt accepts connections, shuts the
 * database down cleanly on SIGTERM, and exits non-zero with a one-line reason on failure.
 */
public final class Launcher {
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
            waitForBolt(options.port, Duration.ofSeconds(60));
        } catch (IOException e) {
            System.err.println("driftgraph-launcher: Bolt did not accept connections: " + e.getMessage());
            System.exit(1);
        }
        System.out.println("READY bolt://127.0.0.1:" + options.port + " auth=" + (options.password != null));
        System.out.flush();
        try {
            stopped.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static DatabaseManagementService start(Options options) {
        Path home = options.dataDir.toAbsolutePath();
        DatabaseManagementService service = new DatabaseManagementServiceBuilder(home)
                .setConfig(BoltConnector.enabled, true)
                .setConfig(BoltConnector.listen_address, new SocketAddress("127.0.0.1", options.port))
                .setConfig(BoltConnector.advertised_address, new SocketAddress("127.0.0.1", options.port))
                .setConfig(HttpConnector.enabled, false)
                .setConfig(HttpsConnector.enabled, false)
                .setConfig(GraphDatabaseSettings.auth_enabled, options.password != null)
                .setConfig(GraphDatabaseSettings.pagecache_memory, ByteUnit.parse(options.pageCache))
                .setConfig(GraphDatabaseSettings.tx_state_max_off_heap_memory, ByteUnit.parse("256m"))
                .build();
        if (options.password != null) {
            // Embedded code runs with full rights: set the neo4j user's password, no change required.
            try {
                service.database(GraphDatabaseSettings.SYSTEM_DATABASE_NAME).executeTransactionally(
                        "ALTER USER neo4j SET PASSWORD $password CHANGE NOT REQUIRED",
                        Map.of("password", options.password));
            } catch (RuntimeException e) {
                // A restart on an existing data dir with the same password: nothing to change.
                if (!rootMessage(e).contains("Old password and new password cannot be the same")) {
                    service.shutdown();
                    throw e;
                }
            }
        }
        return service;
    }

    private static void waitForBolt(int port, Duration timeout) throws IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        IOException last = null;
        while (System.nanoTime() < deadline) {
            try (Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress("127.0.0.1", port), 1000);
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

    private static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t.getClass().getSimpleName() + ": " + t.getMessage();
    }

    /** Command-line options; the password comes from NEO4J_PASSWORD so it never shows in ps. */
    static final class Options {
        int port = 7687;
        Path dataDir = Path.of("neo4j-data");
        String pageCache = "128m";
        String password = System.getenv("NEO4J_PASSWORD");

        static Options parse(String[] args) {
            Options o = new Options();
            for (int i = 0; i < args.length; i++) {
                String a = args[i];
                if (i + 1 >= args.length) {
                    throw new IllegalArgumentException("missing value after " + a);
                }
                String v = args[++i];
                switch (a) {
                    case "--port" -> o.port = Integer.parseInt(v);
                    case "--data-dir" -> o.dataDir = Path.of(v);
                    case "--page-cache" -> o.pageCache = v;
                    default -> throw new IllegalArgumentException("unknown option " + a
                            + " (allowed: --port, --data-dir, --page-cache)");
                }
            }
            if (o.password != null && o.password.isEmpty()) {
                o.password = null;
            }
            if (o.password != null && o.password.length() < 8) {
                throw new IllegalArgumentException("NEO4J_PASSWORD must have at least 8 characters (Neo4j's minimum)");
            }
            return o;
        }
    }
}
