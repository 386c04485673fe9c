package io.driftgraph.client;

import java.util.List;
import java.util.Map;

/** Placeholder until the local-search expansion statement lands. */
public record Expansion(List<Map<String, Object>> candidates) {
    public record Options(int x) {
        static Options fromFlags(Map<String, String> flags) {
            return new Options(0);
        }
    }

    public Map<String, Object> toMap() {
        return Map.of("candidates", candidates);
    }
}
