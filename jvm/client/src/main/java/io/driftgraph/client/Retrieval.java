package io.driftgraph.client;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A stored retrieval read back from Neo4j: {@code (:Retrieval)-[:INCLUDED|DROPPED]->(item)} and, for DRIFT,
 * its {@code (:DriftStep)} tree.
 */
public record Retrieval(
        String id,
        Map<String, Object> properties,
        List<Item> included,
        List<Item> dropped,
        List<Map<String, Object>> steps) {

    /**
     * One edge. {@code source} is report, entity, relationship, chunk or claim ({@code entry} for an entry
     * entity cut before expansion); {@code id} is the item's id (a relationship's id for relationship items,
     * whose edge points at the relationship's start entity, {@code nodeId}). {@code location} is a chunk's
     * page, slide or heading path as the stored trace recorded it ({@code "page 12"}), else null.
     */
    public record Item(
            String edge,
            String source,
            String id,
            Long rank,
            Long tokens,
            String hop,
            String reason,
            String nodeId,
            List<String> labels,
            String location) {

        /** An edge row of {@code cypher/trace/read}; {@code locations} maps {@code source:id} to a location. */
        static Item of(Map<String, Object> m, Map<String, String> locations) {
            String source = str(m.get("source"));
            String id = str(m.get("item_id"));
            return new Item(
                    str(m.get("edge")), source, id, num(m.get("rank")), num(m.get("tokens")), str(m.get("hop")),
                    str(m.get("reason")), str(m.get("node_id")),
                    DriftgraphClient.asList(m.get("labels")).stream().map(String::valueOf).toList(),
                    locations.get(source + ":" + id));
        }

        /** {@code source:id}, the identity the Python trace uses for an item. */
        public String key() {
            return source + ":" + id;
        }

        public Map<String, Object> toMap() {
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("source", source);
            out.put("id", id);
            out.put("rank", rank);
            if ("INCLUDED".equals(edge)) {
                out.put("tokens", tokens);
            } else {
                out.put("reason", reason);
            }
            out.put("hop", hop);
            out.put("node_id", nodeId);
            out.put("labels", labels);
            if (location != null) {
                out.put("location", location);
            }
            return out;
        }
    }

    /** {@code source:id -> location} of the stored trace's items that have one (chunks of located documents). */
    static Map<String, String> locations(Object trace) {
        Map<String, String> out = new LinkedHashMap<>();
        for (Object o : DriftgraphClient.asList(DriftgraphClient.asMap(trace).get("items"))) {
            Map<String, Object> item = DriftgraphClient.asMap(o);
            if (item.get("location") instanceof String where) {
                out.put(item.get("source") + ":" + item.get("id"), where);
            }
        }
        return out;
    }

    /** Total tokens of the included items. */
    public long includedTokens() {
        return included.stream().mapToLong(i -> i.tokens() == null ? 0 : i.tokens()).sum();
    }

    /**
     * The retrieval as one JSON-ready map: {@code retrieval} (properties), {@code included}, {@code dropped},
     * {@code steps}, then the full {@code trace} the Python side stored (entry verdicts, budget, route).
     */
    public Map<String, Object> toMap() {
        Map<String, Object> props = new LinkedHashMap<>(properties);
        Object trace = props.remove("trace");
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("retrieval_id", id);
        out.put("retrieval", props);
        out.put("included", included.stream().map(Item::toMap).toList());
        out.put("dropped", dropped.stream().map(Item::toMap).toList());
        out.put("steps", steps);
        out.put("trace", trace);
        return out;
    }

    private static String str(Object o) {
        return o == null ? null : String.valueOf(o);
    }

    private static Long num(Object o) {
        return o instanceof Number n ? n.longValue() : null;
    }
}
