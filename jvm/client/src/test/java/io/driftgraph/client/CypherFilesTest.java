package io.driftgraph.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The loader, and the parameter contract between the Java side and the cypher/ files (no database). */
class CypherFilesTest {
    @Test
    void everyStatementTheClientRunsExistsAndTakesExactlyTheParametersItPasses() {
        CypherFiles cypher = CypherFiles.fromEnvironment();
        for (Map.Entry<String, Set<String>> e : DriftgraphClient.PARAMETERS.entrySet()) {
            assertEquals(e.getValue(), cypher.parameters(e.getKey()),
                    "cypher/" + e.getKey() + ".cypher: its $parameters differ from what the JVM client passes; "
                            + "update jvm/client (DriftgraphClient.PARAMETERS and the call that runs it) with the file");
        }
    }

    @Test
    void loadsTrimmedTextAndFindsParametersOutsideLiteralsAndComments(@TempDir Path root) throws Exception {
        Files.createDirectories(root.resolve("cypher/query"));
        Files.writeString(root.resolve("cypher/query/x.cypher"),
                "// uses $notThis\nMATCH (n {id: $id}) WHERE n.t = '$no' AND n.k IN $ids_2 /* $nope */\nRETURN n\n\n");
        CypherFiles cypher = new CypherFiles(root);
        assertEquals(Set.of("id", "ids_2"), cypher.parameters("query/x"));
        assertTrue(cypher.load("query/x").endsWith("RETURN n"));
    }

    @Test
    void splitsMultiStatementFilesLikeThePythonLoader(@TempDir Path root) throws Exception {
        Files.createDirectories(root.resolve("cypher/schema"));
        Files.writeString(root.resolve("cypher/schema/s.cypher"), "CREATE A;\nCREATE B ;\n\nCREATE C\n");
        assertArrayEquals(new String[] {"CREATE A", "CREATE B", "CREATE C"},
                new CypherFiles(root).statements("schema/s"));
    }

    @Test
    void missingFolderOrStatementIsAOneLineError(@TempDir Path root) throws Exception {
        ClientException noFolder = assertThrows(ClientException.class, () -> new CypherFiles(root));
        assertTrue(noFolder.getMessage().contains("driftgraph.root"), noFolder.getMessage());
        Files.createDirectories(root.resolve("cypher"));
        CypherFiles cypher = new CypherFiles(root);
        ClientException missing = assertThrows(ClientException.class, () -> cypher.load("query/nope"));
        assertTrue(missing.getMessage().contains("query/nope"), missing.getMessage());
        assertThrows(ClientException.class, () -> cypher.load("../etc/passwd"));
    }

    @Test
    void rootComesFromTheSystemPropertySetByMaven() {
        String root = System.getProperty(CypherFiles.ROOT_PROPERTY);
        assertTrue(root != null && !root.isBlank(), "surefire passes -Ddriftgraph.root");
        assertEquals(Path.of(root).resolve("cypher").toAbsolutePath().normalize(),
                CypherFiles.fromEnvironment().dir());
    }
}
