"""Evidence recall on the synthetic multi-hop questions (``bench/questions/musique_synth.jsonl``), per hop count.

python -m bench synth-recall --uri bolt://... --out bench/results/raw/synth_questions.json

The 50 dev questions hold 16 three-hop and 2 four-hop questions: a change to the multi-hop mechanisms moves
a question or two there, within noise. This runs driftgraph local (the defaults and each ``VARIANTS`` entry,
overrides of ``local``) and vector-only on the 180 questions ``bench/run/synth_questions.py`` composes from the
index's own triples (60 each of 2, 3 and 4 hops), on the database that holds the imported MuSiQue index,
with 95% bootstrap intervals and paired wins/losses of the defaults against each other system.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from bench import metrics, paths
from bench.run import data, machine, vector_only
from bench.run.dg import common

QUESTIONS = paths.QUESTIONS / "musique_synth.jsonl"
BUDGETS = (2000, 4000, 8000)
VARIANTS: dict[str, dict] = {
    "previous default (no RELATED edges among the known entities)": {"ppr": {"known_relations": False}},
    "walk before 2026-12-03 (damping 0.5, linear mass, no RELATED edges)": {
        "ppr": {"damping": 0.5, "mass_exponent": 1.0, "known_relations": False}
    },
    "damping 0.85, linear mass, no RELATED edges": {"ppr": {"mass_exponent": 1.0, "known_relations": False}},
    "damping 0.5, root of the mass, no RELATED edges": {"ppr": {"damping": 0.5, "known_relations": False}},
    "ppr with the fetch (4 trips)": {"ppr": {"fetch": True}},
}


def summarise(recall: dict[str, list[float]], hops: list[int]) -> dict:
    """Mean, interval and per-hop means of one system's per-question recall at each budget."""
    out = {}
    for b, vals in recall.items():
        lo, hi = metrics.bootstrap_ci(vals)
        per_hop = {
            str(h): metrics.mean(v for v, hh in zip(vals, hops, strict=True) if hh == h) for h in sorted(set(hops))
        }
        out[b] = {"mean": metrics.mean(vals), "lo": lo, "hi": hi, "per_hop": per_hop}
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--uri", required=True)
    ap.add_argument("--questions", type=Path, default=QUESTIONS)
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)

    from driftgraph.llm.tokenizer import count_tokens

    units = data.text_units()
    qs = data.questions(a.questions)
    hops = [q.hops for q in qs]
    base = common.engine(a.uri)
    qvec = dict(zip([q.id for q in qs], base.embed([q.question for q in qs]), strict=True))
    systems: dict[str, dict] = {}
    for name, over in {"driftgraph local (defaults)": {}, **VARIANTS}.items():
        recall = common.local_recall(a.uri, over, qs, qvec, units, BUDGETS)
        systems[name] = {"overrides": over, "recall": recall}
        print(name, {b: round(metrics.mean(v), 3) for b, v in recall.items()}, flush=True)
    rows = vector_only.run(qs, units, base.runtime.embedder.embed, lambda t: count_tokens(t, "cl100k_base"), BUDGETS)
    systems["vector-only chunks"] = {"recall": {b: [r["recall"] for r in v] for b, v in rows.items()}}
    base.close()
    ours = systems["driftgraph local (defaults)"]["recall"]
    for sys_ in systems.values():
        sys_["summary"] = summarise(sys_["recall"], hops)
    paired = {
        name: {b: metrics.paired(ours[b], s["recall"][b]) for b in ours}
        for name, s in systems.items()
        if name != "driftgraph local (defaults)"
    }
    out = {
        "questions": a.questions.name,
        "budgets": list(BUDGETS),
        "hops": hops,
        "systems": systems,
        "paired_defaults_vs": paired,
        "machine": machine.describe(),
        "command": "python -m bench " + " ".join(sys.argv[1:]),
    }
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(out, indent=1))
