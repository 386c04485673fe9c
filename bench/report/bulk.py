"""Report section for ``raw/hnsw.json``: what each HNSW setting costs to build and gives back in recall."""

from __future__ import annotations


def hnsw(d: dict) -> list[str]:
    m = d["machine"]
    out = [
        "## HNSW settings: vector index build time and recall",
        "",
        f"{m['date']}, {m['cpu']}, load {m.get('load', '?')}, driftgraph {m.get('driftgraph', '?')}; "
        f"`{d.get('command', '')}`.",
        "",
        "Per setting (`neo4j.vector_index.m` : `ef_construction`), the index is built over vectors already stored "
        "and timed until ONLINE; each query's best 10 are compared with the exact top 10 (cosine). `of 30`: the "
        "best 10 of 30 asked, which is what local search asks for entities (`entity_top_k` 10 x "
        "`entity_oversample` 3).",
        "",
        "| data | vectors | m : ef_construction | build s | vectors/s | recall@10 of 10 | recall@10 of 30 |",
        "|---|---:|---|---:|---:|---:|---:|",
    ]
    for row in d["rows"]:
        for s in row["settings"]:
            out.append(
                f"| {row['data']} | {row['vectors']:,} | {s['m']} : {s['ef_construction']} | {s['build_s']:.1f} | "
                f"{s['vectors_per_s']:,.0f} | {s['recall_at_10_of_10']:.3f} | {s['recall_at_10_of_30']:.3f} |"
            )
    out.append("")
    return out


def java(d: dict) -> list[str]:
    """``raw/java.json``: the launcher's JVM per size; each row carries its own date and load."""
    out = [
        "## The launcher's Java: imports and HNSW builds per JVM",
        "",
        f"`{d.get('command', '')}` (last run {d['machine']['date']}, "
        f"driftgraph {d['machine'].get('driftgraph', '?')}). "
        "Java 20-22 get `--add-modules jdk.incubator.vector`, so Neo4j's Lucene computes vector distances "
        "with SIMD.",
        "",
        "| entities | JVM | measured | load | import s | graph write s | vectors s "
        "| build vectors/s 16:100 / 16:50 / 8:32 |",
        "|---:|---|---|---|---:|---:|---:|---|",
    ]
    for r in d["rows"]:
        ph = r["import"].get("phase_seconds", {})
        builds = " / ".join(f"{s['vectors_per_s']:,.0f}" for h in r.get("hnsw", []) for s in h["settings"]) or "–"
        out.append(
            f"| {r['entities']:,} | {r['java']} | {r['measured']} | {r['load_avg']} | {r['import']['wall_s']:.1f} | "
            f"{ph.get('write', 0):.1f} | {ph.get('embed', 0):.1f} | {builds} |"
        )
    out.append("")
    return out
