package io.driftgraph.launcher;

import java.util.Map;

import org.neo4j.configuration.GraphDatabaseSettings;
import org.neo4j.dbms.api.DatabaseManagementService;
import org.neo4j.kernel.extension.ExtensionFactory;
import org.neo4j.kernel.extension.ExtensionType;
import org.neo4j.kernel.extension.context.ExtensionContext;
import org.neo4j.kernel.lifecycle.Lifecycle;
import org.neo4j.kernel.lifecycle.LifecycleAdapter;

/**
 * Sets the {@code neo4j} user's password while the DBMS starts, before Bolt and HTTP listen.
 *
 * <p>Neo4j starts its global lifecycle in order: the system database, then the global extensions
 * (this one), then the Bolt server, then the web server. Setting the password here means no client
 * can ever connect while the user still has the default password (which used to cost a starting
 * client authentication failures and then Neo4j's authentication rate limit). Registered through
 * {@code META-INF/services/org.neo4j.kernel.extension.ExtensionFactory}; it does nothing unless
 * {@link #password} was set, so it is inert in any other DBMS on this classpath.
 */
public final class InitialPasswordExtension extends ExtensionFactory<InitialPasswordExtension.Dependencies> {
    /** The password to set, handed over by {@link Launcher} before the DBMS is built. */
    static volatile String password;

    public interface Dependencies {
        DatabaseManagementService databaseManagementService();
    }

    public InitialPasswordExtension() {
        super(ExtensionType.GLOBAL, "driftgraph-initial-password");
    }

    @Override
    public Lifecycle newInstance(ExtensionContext context, Dependencies dependencies) {
        return new LifecycleAdapter() {
            @Override
            public void start() {
                String pw = password;
                if (pw != null) {
                    setPassword(dependencies.databaseManagementService(), pw);
                }
            }
        };
    }

    static void setPassword(DatabaseManagementService dbms, String pw) {
        // Embedded code runs with full rights: set the password, no change required at first login.
        try {
            dbms.database(GraphDatabaseSettings.SYSTEM_DATABASE_NAME).executeTransactionally(
                    "ALTER USER neo4j SET PASSWORD $password CHANGE NOT REQUIRED", Map.of("password", pw));
        } catch (RuntimeException e) {
            // A restart on an existing data dir with the same password: nothing to change.
            if (!Launcher.rootMessage(e).contains("Old password and new password cannot be the same")) {
                throw e;
            }
        }
    }
}
