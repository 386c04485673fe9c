package io.driftgraph.client;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The candidates of one local-search expansion ({@code cypher/query/local_expand.cypher}): entities,
 * relationships, community reports, claims and chunks, each with its {@code n_tokens} and the raw signals
 * the Python side ranks by. Ranking and budgeting stay with the caller; this only says what is reachable.
 */
public record Expansion(List<Candidate> candidates) {
    /** Row fields that are ranking signals (everything else is content: titles, text, descriptions). */
    static final Set<String> SIGNALS = Set.of(
            "similarity", "entry_rank", "degree", "weight", "combined_degree", "in_network", "matched", "rank",
            "level", "entity_id");

    /** The statement's result lists, in output order, and the source name of their rows. */
    static final Map<String, String> SOURCES = orderedSources();

    private static Map<String, String> orderedSources() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("entities", "entity");
        m.put("relationships", "relationship");
        m.put("reports", "report");
        m.put("claims", "claim");
        m.put("chunks", "chunk");
        return m;
    }

    /**
     * One candidate. {@code nTokens} is null for claims (the index stores no claim token count).
     * Report signals add {@code vector_hit} (among the given report hits); chunk signals add {@code vector_hit} (among the given chunk hits), {@code entity_ids} (entry entities that
     * mention it) and {@code seed_links} ({@code {entity, df, via}}: a rare entity it shares with a seed chunk).
     */
    public record Candidate(String source, String id, Long nTokens, Map<String, Object> signals,
            Map<String, Object> content) {
        public Map<String, Object> toMap() {
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("source", source);
            out.put("id", id);
            out.put("n_tokens", nTokens);
            out.put("signals", signals);
            out.put("content", content);
            return out;
        }

        /**
         * Where a chunk came from: {@code "page 12"}, {@code "pages 3-4"}, {@code "slide 2"} or a heading path
         * such as {@code "Operations > Storm recovery"} (the Chunk node's {@code location}, written by
         * {@code driftgraph index}); null for other sources and for chunks of plain text or imported indexes.
         */
        public String location() {
            return content.get("location") instanceof String s ? s : null;
        }
    }

    /**
     * The expansion's knobs; the defaults equal the {@code local.*} defaults of driftgraph's configuration
     * ({@code hop_max_chunks_per_entity}, {@code relationships_per_entity}, {@code max_community_level},
     * {@code entity_seed_chunks}).
     *
     * @param seedIds chunk ids whose rare entities seed the second hop (the top chunk vector hits)
     * @param chunkIds chunk vector hits that are candidates in their own right
     * @param reportIds community report vector hits that are candidates in their own right
     * @param excludeIds entities never hopped through nor related to (ids)
     * @param excludeTitles the same by title (compared lower-case)
     * @param maxDf entities mentioned in more chunks than this are too common to hop through
     * @param perEntity chunks taken per entry entity (most similar to the query first)
     * @param relsPerEntity relationships per entry entity (in-network first)
     * @param maxLevel reports of communities up to this level
     * @param entitySeeds each entry entity's best chunks that also seed the second hop
     */
    public record Options(List<String> seedIds, List<String> chunkIds, List<String> reportIds,
            List<String> excludeIds, List<String> excludeTitles, int maxDf, int perEntity, int relsPerEntity,
            int maxLevel, int entitySeeds) {
        /** No seeds, hits or exclusions; limits as driftgraph's {@code local.*} defaults. */
        public static Options defaults() {
            return new Options(List.of(), List.of(), List.of(), List.of(), List.of(), 25, 25, 10, 2, 1);
        }

        /** Entry hits: seed chunks for the second hop, chunk and report vector hits. */
        public Options withHits(List<String> seedIds, List<String> chunkIds, List<String> reportIds) {
            return new Options(List.copyOf(seedIds), List.copyOf(chunkIds), List.copyOf(reportIds), excludeIds,
                    excludeTitles, maxDf, perEntity, relsPerEntity, maxLevel, entitySeeds);
        }

        /** Entities never hopped through nor related to, by id and by title. */
        public Options withExcluded(List<String> ids, List<String> titles) {
            return new Options(seedIds, chunkIds, reportIds, List.copyOf(ids),
                    titles.stream().map(t -> t.toLowerCase(Locale.ROOT)).toList(), maxDf, perEntity,
                    relsPerEntity, maxLevel, entitySeeds);
        }

        /** {@code local.hop_max_chunks_per_entity, entity_chunks, relationships_per_entity, max_community_level}. */
        public Options withLimits(int maxDf, int perEntity, int relsPerEntity, int maxLevel) {
            return new Options(seedIds, chunkIds, reportIds, excludeIds, excludeTitles, maxDf, perEntity,
                    relsPerEntity, maxLevel, entitySeeds);
        }

        /** {@code local.entity_seed_chunks}: each entry entity's best chunks that also seed the second hop. */
        public Options withEntitySeeds(int entitySeeds) {
            return new Options(seedIds, chunkIds, reportIds, excludeIds, excludeTitles, maxDf, perEntity,
                    relsPerEntity, maxLevel, entitySeeds);
        }

        /** From command-line flags ({@code --seed-ids a,b --chunk-ids --report-ids --exclude-ids --max-df ...}). */
        static Options fromFlags(Map<String, String> flags) {
            Options d = defaults();
            return d.withHits(ids(flags.get("seed-ids")), ids(flags.get("chunk-ids")), ids(flags.get("report-ids")))
                    .withExcluded(ids(flags.get("exclude-ids")), ids(flags.get("exclude-titles")))
                    .withLimits(integer(flags, "max-df", d.maxDf), integer(flags, "per-entity", d.perEntity),
                            integer(flags, "rels-per-entity", d.relsPerEntity),
                            integer(flags, "max-level", d.maxLevel))
                    .withEntitySeeds(integer(flags, "entity-seeds", d.entitySeeds));
        }

        /** The statement's parameters (the query vector and entity ids are added by the client). */
        Map<String, Object> params() {
            Map<String, Object> p = new LinkedHashMap<>();
            p.put("seed_ids", seedIds);
            p.put("chunk_ids", chunkIds);
            p.put("report_ids", reportIds);
            p.put("exclude_ids", excludeIds);
            p.put("exclude_titles", excludeTitles);
            p.put("max_df", (long) maxDf);
            p.put("per_entity", (long) perEntity);
            p.put("rels_per_entity", (long) relsPerEntity);
            p.put("max_level", (long) maxLevel);
            p.put("entity_seeds", (long) entitySeeds);
            return p;
        }

        private static List<String> ids(String csv) {
            if (csv == null || csv.isBlank()) {
                return List.of();
            }
            return List.of(csv.split("\\s*,\\s*"));
        }

        private static int integer(Map<String, String> flags, String name, int fallback) {
            String v = flags.get(name);
            if (v == null) {
                return fallback;
            }
            try {
                return Integer.parseInt(v.strip());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("--" + name + " must be an integer, got '" + v + "'");
            }
        }
    }

    /** Builds the candidates from the statement's one row. */
    static Expansion of(Map<String, Object> row, Options options) {
        Map<String, List<Object>> entityLinks = new TreeMap<>();
        for (Object o : DriftgraphClient.asList(row.get("entity_links"))) {
            Map<String, Object> link = DriftgraphClient.asMap(o);
            entityLinks.computeIfAbsent(String.valueOf(link.get("chunk")), k -> new ArrayList<>())
                    .add(link.get("entity"));
        }
        Map<String, List<Object>> seedLinks = new TreeMap<>();
        for (Object o : DriftgraphClient.asList(row.get("seed_links"))) {
            Map<String, Object> link = new LinkedHashMap<>(DriftgraphClient.asMap(o));
            String chunk = String.valueOf(link.remove("chunk"));
            link.remove("title");
            seedLinks.computeIfAbsent(chunk, k -> new ArrayList<>()).add(link);
        }
        Set<String> chunkHits = new LinkedHashSet<>(options.chunkIds());
        Set<String> reportHits = new LinkedHashSet<>(options.reportIds());
        List<Candidate> out = new ArrayList<>();
        for (Map.Entry<String, String> list : SOURCES.entrySet()) {
            List<Candidate> part = new ArrayList<>();
            Set<String> seen = new LinkedHashSet<>();
            for (Object o : DriftgraphClient.asList(row.get(list.getKey()))) {
                Map<String, Object> r = DriftgraphClient.asMap(o);
                String id = String.valueOf(r.get("id"));
                if (!seen.add(id)) {
                    continue; // a relationship between two entry entities comes once per endpoint
                }
                Map<String, Object> signals = new TreeMap<>();
                Map<String, Object> content = new LinkedHashMap<>();
                for (Map.Entry<String, Object> f : r.entrySet()) {
                    if (f.getKey().equals("id") || f.getKey().equals("n_tokens")) {
                        continue;
                    }
                    (SIGNALS.contains(f.getKey()) ? signals : content).put(f.getKey(), f.getValue());
                }
                if (list.getValue().equals("report")) {
                    signals.put("vector_hit", reportHits.contains(id));
                }
                if (list.getValue().equals("chunk")) {
                    signals.put("vector_hit", chunkHits.contains(id));
                    signals.put("entity_ids", entityLinks.getOrDefault(id, List.of()));
                    signals.put("seed_links", seedLinks.getOrDefault(id, List.of()));
                }
                Long nTokens = r.get("n_tokens") instanceof Number n ? n.longValue() : null;
                part.add(new Candidate(list.getValue(), id, nTokens, signals, content));
            }
            part.sort((a, b) -> a.id().compareTo(b.id()));
            out.addAll(part);
        }
        return new Expansion(List.copyOf(out));
    }

    /** The candidates of one source ({@code entity}, {@code relationship}, {@code report}, {@code claim}, {@code chunk}). */
    public List<Candidate> of(String source) {
        return candidates.stream().filter(c -> c.source().equals(source)).toList();
    }

    public Map<String, Object> toMap() {
        Map<String, Object> out = new LinkedHashMap<>();
        Map<String, Long> counts = new LinkedHashMap<>();
        for (String source : SOURCES.values()) {
            counts.put(source, (long) of(source).size());
        }
        out.put("counts", counts);
        out.put("candidates", candidates.stream().map(Candidate::toMap).toList());
        return out;
    }
}
