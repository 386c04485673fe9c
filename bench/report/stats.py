"""The quality section's statistics: bootstrap intervals, paired wins/losses, ranked recall, the CV folds.

Fifty questions are few: a 0.03 gap can be noise. Each recall gets a seeded 95% bootstrap interval over
questions, each comparison with a baseline is paired (same questions) with its own interval of the mean
difference, and a difference whose interval holds 0 is printed as not significant.
"""

from __future__ import annotations

from bench.metrics import mean, mean_ci, paired, percentile

DG = "driftgraph local"
BASELINES = ("vector-only chunks", "GraphRAG 3.2.0 local, community-entity store", "GraphRAG 3.2.0 local")


def paired_cell(p: dict, counts: str, not_significant: str) -> str:
    """One paired comparison as a table cell: mean difference [interval], the counts, and a mark when the
    interval holds 0."""
    return f"{p['diff']:+.3f} [{p['lo']:+.2f}, {p['hi']:+.2f}] {counts}{'' if p['significant'] else not_significant}"


def _rk(rows: list[dict], key: str) -> str:
    vals = [r[key] for r in rows if key in r]
    return mean_ci(vals) if len(vals) == len(rows) and vals else "–"


def section(q: dict, cv: dict | None) -> list[str]:
    budgets = q["budgets"]
    sy = q["systems"]
    out = [
        "### Intervals and paired comparisons",
        "",
        "Mean evidence recall with its 95% bootstrap interval over the 50 questions (2,000 resamples, seed 0). "
        "R@2 / R@5: share of the gold units among the system's first 2 / 5 ranked chunks, whatever the budget "
        "(HippoRAG 2's measure; GraphRAG's context builder exposes no chunk ranking, hence –).",
        "",
        "| system | " + " | ".join(f"{b:,}" for b in budgets) + " | R@2 | R@5 |",
        "|---|" + "---:|" * (len(budgets) + 2),
    ]
    for name in (DG, *BASELINES):
        if name not in sy:
            continue
        first = sy[name][str(budgets[0])]
        cells = [mean_ci([r["recall"] for r in sy[name][str(b)]]) for b in budgets]
        out.append(f"| {name} | " + " | ".join(cells) + f" | {_rk(first, 'r2')} | {_rk(first, 'r5')} |")
    out += [
        "",
        "driftgraph minus each baseline, paired by question: mean difference [95% bootstrap interval], "
        "questions won / lost / tied.",
        "",
        "| baseline | " + " | ".join(f"{b:,}" for b in budgets) + " |",
        "|---|" + "---|" * len(budgets),
    ]
    for name in BASELINES:
        if name not in sy or DG not in sy:
            continue
        cells = []
        for b in budgets:
            a = {r["id"]: r["recall"] for r in sy[DG][str(b)]}
            o = {r["id"]: r["recall"] for r in sy[name][str(b)]}
            ids = sorted(a.keys() & o.keys())
            p = paired([a[i] for i in ids], [o[i] for i in ids], seed=0)
            cells.append(paired_cell(p, f"{p['wins']}/{p['losses']}/{p['ties']}", " **not significant**"))
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    out.append("")
    out += latency(q)
    out += found_by_hop(q)
    if cv:
        out += cross_validation(cv)
    return out


def latency(q: dict) -> list[str]:
    """driftgraph's per-question latency in the quality run: bare assembly vs the product path."""
    cells = []
    for b in q["budgets"]:
        rows = (q["systems"].get(DG) or {}).get(str(b)) or []
        bare = [r["ms"] for r in rows if "ms" in r]
        api = [r["ms_api"] for r in rows if "ms_api" in r]
        if bare and api:
            cells.append(f"{b:,}: {percentile(bare, 50):.0f} / {percentile(api, 50):.0f} ms")
    if not cells:
        return []
    return [
        "driftgraph local latency per question, p50, during the quality run (one pass, not the speed part): "
        "bare retrieval + assembly (`build_local_context`, vector handed in) / product path "
        "(`Engine.query_local`, context only: embedding from the cache, trace written to Neo4j): "
        + "; ".join(cells)
        + ".",
        "",
    ]


def found_by_hop(q: dict) -> list[str]:
    """Which hop brought each gold unit in as a candidate (driftgraph's trace ``depth``), by question hops."""
    rows = (q["systems"].get(DG) or {}).get(str(q["budgets"][0])) or []
    if not rows or "hops_found" not in rows[0]:
        return []
    labels: dict[int | None, str] = {
        1: "hop 1 (vector / entry entity)",
        2: "hop 2",
        3: "hop 3",
        4: "hop 4",
        5: "hop 5+",
        None: "not a candidate",
    }
    counts: dict[int, dict[int | None, int]] = {}
    for r in rows:
        per = counts.setdefault(r["hops"], {})
        for depth in r["hops_found"].values():
            depth = min(depth, 5) if depth is not None else None
            per[depth] = per.get(depth, 0) + 1
    keys = [k for k in labels if any(k in per for per in counts.values())]
    out = [
        "Where driftgraph's candidates came from: gold units by the hop that first fetched them (trace `depth`), "
        "per question hop count.",
        "",
        "| question hops | " + " | ".join(labels[k] for k in keys) + " |",
        "|---|" + "---:|" * len(keys),
    ]
    for h in sorted(counts):
        out.append(f"| {h} | " + " | ".join(str(counts[h].get(k, 0)) for k in keys) + " |")
    out.append("")
    return out


def cross_validation(cv: dict) -> list[str]:
    budgets = cv["budgets"]
    out = [
        "### Multi-hop weights: 5-fold cross-validation (dev split)",
        "",
        "Each configuration assembled every question's context at each budget (`python -m bench.dg.cv`); a "
        "question's score is its recall averaged over the budgets. Per fold, the configuration best on the "
        "other four folds is scored on the held-out fold, so the held-out figure never saw the questions that "
        "chose it. R@2 / R@5 as above (the ranking, whatever the budget; not part of the score).",
        "",
        "| configuration | " + " | ".join(f"{b:,}" for b in budgets) + " | R@2 | R@5 |",
        "|---|" + "---:|" * (len(budgets) + 2),
    ]
    hops = cv.get("hops") or []
    for name, c in cv["configs"].items():
        cells = [f"{mean(c['recall'][str(b)]):.3f}" for b in budgets]
        cells += [f"{mean(c[k]):.3f}" if k in c else "–" for k in ("r2", "r5")]  # older raw files have none
        out.append(f"| {name} `{c['overrides']}` | " + " | ".join(cells) + " |")
    out += paired_with_first(cv)
    out += ["", "| fold | chosen | train score | held-out score | questions |", "|---|---|---:|---:|---:|"]
    for i, f in enumerate(cv["cv"]["folds"], start=1):
        out.append(f"| {i} | {f['chosen']} | {f['train']:.3f} | {f['test']:.3f} | {f['n']} |")
    c = cv["cv"]
    held = cv.get("held_out_by_budget") or {}
    out += [
        "",
        f"Held-out score {c['held_out']:.3f} (fold spread {c['min']:.3f}–{c['max']:.3f}, mean of folds "
        f"{c['mean']:.3f}); held-out recall by budget: "
        + ", ".join(f"{int(b):,}: {v:.3f}" for b, v in held.items())
        + ".",
    ]
    if hops:
        out += [
            "",
            "Per hop count (evidence recall of each configuration):",
            "",
            "| configuration | hops (questions) | " + " | ".join(f"{b:,}" for b in budgets) + " |",
            "|---|---|" + "---:|" * len(budgets),
        ]
        for name, cfg in cv["configs"].items():
            for h in sorted(set(hops)):
                idx = [i for i, x in enumerate(hops) if x == h]
                cells = [f"{mean(cfg['recall'][str(b)][i] for i in idx):.3f}" for b in budgets]
                out.append(f"| {name} | {h} ({len(idx)}) | " + " | ".join(cells) + " |")
    out.append("")
    return out


def paired_with_first(cv: dict) -> list[str]:
    """Each configuration minus the first (the shipped defaults), paired by question, per budget, then R@2 and
    R@5 where the raw file has them."""
    budgets = cv["budgets"]
    names = list(cv["configs"])
    if len(names) < 2:
        return []
    first = cv["configs"][names[0]]
    base = first["recall"]
    ranked = [k for k in ("r2", "r5") if all(k in c for c in cv["configs"].values())]
    out = [
        "",
        f"Each configuration minus the first ({names[0]}), paired by question: mean difference [95% bootstrap "
        "interval], questions won / lost / tied.",
        "",
        "| configuration | " + " | ".join([*(f"{b:,}" for b in budgets), *(f"R@{k[1:]}" for k in ranked)]) + " |",
        "|---|" + "---|" * (len(budgets) + len(ranked)),
    ]
    for name in names[1:]:
        c = cv["configs"][name]
        pairs = [paired(c["recall"][str(b)], base[str(b)], seed=0) for b in budgets]
        pairs += [paired(c[k], first[k], seed=0) for k in ranked]
        cells = [paired_cell(p, f"{p['wins']}/{p['losses']}/{p['ties']}", " n.s.") for p in pairs]
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    return out
