package io.driftgraph.client;

import java.time.OffsetDateTime;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.neo4j.driver.Record;
import org.neo4j.driver.Value;
import org.neo4j.driver.types.Entity;
import org.neo4j.driver.types.Node;
import org.neo4j.driver.types.Relationship;
import org.neo4j.driver.types.TypeSystem;

/**
 * Driver values as plain Java maps, lists, strings, numbers and booleans, ready for JSON. Embedding
 * vectors are left out of nodes (they are large and not what a caller reads back); temporal values become
 * ISO strings.
 */
public final class Plain {
    /** Node and relationship properties never copied into output. */
    public static final Set<String> SKIPPED_PROPERTIES = Set.of("embedding");

    private Plain() {}

    /** One record as an ordered map of its columns. */
    public static Map<String, Object> record(Record record) {
        Map<String, Object> out = new LinkedHashMap<>();
        for (String key : record.keys()) {
            out.put(key, value(record.get(key)));
        }
        return out;
    }

    /** Any driver value as plain Java. */
    public static Object value(Value v) {
        TypeSystem t = TypeSystem.getDefault();
        if (v == null || v.isNull()) {
            return null;
        }
        if (v.hasType(t.NODE())) {
            Node n = v.asNode();
            Map<String, Object> out = new LinkedHashMap<>();
            List<String> labels = new ArrayList<>();
            n.labels().forEach(labels::add);
            out.put("labels", labels);
            out.putAll(properties(n));
            return out;
        }
        if (v.hasType(t.RELATIONSHIP())) {
            Relationship r = v.asRelationship();
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("type", r.type());
            out.putAll(properties(r));
            return out;
        }
        if (v.hasType(t.LIST())) {
            List<Object> out = new ArrayList<>();
            for (Value item : v.values()) {
                out.add(value(item));
            }
            return out;
        }
        if (v.hasType(t.MAP())) {
            Map<String, Object> out = new LinkedHashMap<>();
            for (String key : v.keys()) {
                out.put(key, value(v.get(key)));
            }
            return out;
        }
        if (v.hasType(t.INTEGER())) {
            return v.asLong();
        }
        if (v.hasType(t.FLOAT())) {
            return v.asDouble();
        }
        if (v.hasType(t.BOOLEAN())) {
            return v.asBoolean();
        }
        if (v.hasType(t.STRING())) {
            return v.asString();
        }
        Object o = v.asObject();
        if (o instanceof ZonedDateTime z) {
            return z.format(DateTimeFormatter.ISO_OFFSET_DATE_TIME);
        }
        if (o instanceof OffsetDateTime z) {
            return z.format(DateTimeFormatter.ISO_OFFSET_DATE_TIME);
        }
        return String.valueOf(o);
    }

    private static Map<String, Object> properties(Entity e) {
        Map<String, Object> out = new LinkedHashMap<>();
        for (String key : e.keys()) {
            if (!SKIPPED_PROPERTIES.contains(key)) {
                out.put(key, value(e.get(key)));
            }
        }
        return out;
    }
}
