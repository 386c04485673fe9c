"""GraphRAG 3.2.0 tuned the way driftgraph's constants were: its own knobs swept on the MuSiQue dev split and
chosen by the same 5-fold cross-validation (issue 39, item 2).

python -m bench gr-tune --out X.json                         # local: sweep + CV on dev
python -m bench gr-tune --basic --out X.json                 # basic: its k, same protocol
python -m bench gr-tune --chosen X.json --questions F --out Y.json   # the default and the tuned on a held-out set

Local sweeps ``top_k_entities`` x ``top_k_relationships`` x ``text_unit_prop`` x ``community_prop`` (``GRID``),
over the entity store of community entities (BASELINE.md: the stronger of the two setups, which reproduces its
figures), at 2k / 4k / 8k / 12k tokens. A question's score is its evidence recall averaged over the budgets,
as in ``bench cv``; ``bench.metrics.cross_validate`` picks, per fold, the configuration best on the other
four folds, so the held-out figure is never measured on the questions that chose it. The tuned configuration
is the one best on all of dev; it is then run once on each held-out set, beside GraphRAG's defaults.
"""

from __future__ import annotations

from bench.run.gr import offline

offline.setup()

import argparse  # noqa: E402
import itertools  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

from bench import metrics  # noqa: E402
from bench.run import data, machine  # noqa: E402
from bench.run.embcache import EmbeddingCache  # noqa: E402
from bench.run.gr import common  # noqa: E402

BUDGETS = (2000, 4000, 8000, 12000)
DEFAULTS = {"top_k_mapped_entities": 10, "top_k_relationships": 10, "text_unit_prop": 0.5, "community_prop": 0.15}
# GraphRAG's defaults first, so a tie goes to them; text_unit_prop + community_prop may not pass 1. The best of
# a first sweep sat on its edge (40 entities, 0.85 of the budget to text), a second on 80: the grid reaches past both.
GRID_VALUES = {
    "top_k_mapped_entities": (10, 20, 40, 80, 160),
    "top_k_relationships": (10, 30),
    "text_unit_prop": (0.5, 0.7, 0.85, 1.0),
    "community_prop": (0.15, 0.0),
}
BASIC_K = (10, 5, 20, 40, 100)  # its default (10) first


def grid() -> dict[str, dict[str, Any]]:
    out = {"defaults": dict(DEFAULTS)}
    keys = list(GRID_VALUES)
    for values in itertools.product(*GRID_VALUES.values()):
        params = dict(zip(keys, values, strict=True))
        if params != DEFAULTS and params["text_unit_prop"] + params["community_prop"] <= 1.0:
            out[_name(params)] = params
    return out


def _name(params: dict[str, Any]) -> str:
    return ",".join(f"{k}={v}" for k, v in params.items())


def _score(rows: dict[str, list[dict[str, Any]]]) -> list[float]:
    """Per question, recall averaged over the budgets (the objective of ``bench cv``)."""
    per_budget = [rows[str(b)] for b in BUDGETS if str(b) in rows]
    return [metrics.mean(r[i]["recall"] for r in per_budget) for i in range(len(per_budget[0]))]


def local_builder(root: Path, cache: EmbeddingCache) -> Callable[[str, int, dict[str, Any]], str]:
    """(question, budget, knobs) -> GraphRAG local's context, over the community-entity store the sweep used."""
    idx = common.load_index(root, cache, "community")
    embedder = common.CachedEmbedder(cache)
    builder = common.local_context_builder(idx, embedder)

    def build(question: str, budget: int, params: dict[str, Any]) -> str:
        embedder.embedding(input=[question])
        res = builder.build_context(query=question, **{**common.local_params(budget), **params})
        _ = idx  # the LanceDB folder (idx.tmpdir) lives as long as the builder
        return res.context_chunks if isinstance(res.context_chunks, str) else "\n\n".join(res.context_chunks)

    return build


def _basic(root: Path, cache: EmbeddingCache) -> Callable[[str, int, dict[str, Any]], str]:
    builder, embedder, tmp = common.basic_context_builder(root, cache)

    def build(question: str, budget: int, params: dict[str, Any]) -> str:
        embedder.embedding(input=[question])
        res = builder.build_context(query=question, k=params["k"], max_context_tokens=budget)
        _ = tmp  # the LanceDB folder lives as long as the builder
        return res.context_chunks if isinstance(res.context_chunks, str) else "\n\n".join(res.context_chunks)

    return build


def run_configs(
    build, configs: dict[str, dict[str, Any]], questions, units, done: dict[str, Any], log=print, unquote=False
) -> dict[str, Any]:
    """Every configuration's rows; those in ``done`` (an earlier run's, same questions) are taken as they are.
    ``unquote``: recall after undoing the CSV quoting of basic search's table (``common.unquoted_recall``)."""
    recall = common.unquoted_recall if unquote else metrics.evidence_recall
    tok = common.tokenizer()
    out: dict[str, Any] = {}
    for n, (name, params) in enumerate(configs.items(), 1):
        if name in done and done[name]["params"] == params:
            out[name] = done[name]
            continue
        rows: dict[str, list[dict[str, Any]]] = {}
        for budget in BUDGETS:
            rows[str(budget)] = []
            for q in questions:
                ctx = build(q.question, budget, params)
                gold = [units.get(g, "") for g in q.gold]
                rows[str(budget)].append({"id": q.id, "recall": recall(ctx, gold), "tokens": len(tok.encode(ctx))})
        out[name] = {"params": params, "rows": rows}
        means = {b: round(metrics.mean(r["recall"] for r in v), 3) for b, v in rows.items()}
        log(f"[{n}/{len(configs)}] {name}: {means}")
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench gr-tune", description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, default=data.MUSIQUE)
    ap.add_argument("--basic", action="store_true", help="tune basic search's k instead of local's knobs")
    ap.add_argument("--questions", type=Path, default=None, help="question file (default: the dev split)")
    ap.add_argument("--chosen", type=Path, default=None, help="a sweep's output: run its defaults and tuned only")
    ap.add_argument("--model-id", default="all-MiniLM-L6-v2-int8")
    ap.add_argument("--resume", action="store_true", help="reuse the configurations already in --out")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)
    cache = EmbeddingCache(a.model_id)
    questions = data.questions(a.questions) if a.questions else data.questions()
    units = data.text_units(a.root)
    if a.chosen is not None:
        swept = json.loads(a.chosen.read_text(encoding="utf-8"))
        basic = swept["system"] == "graphrag-basic"
        configs = {"defaults": swept["configs"]["defaults"]["params"], "tuned": swept["tuned"]["params"]}
    else:
        basic = a.basic
        configs = {f"k={k}" if k != BASIC_K[0] else "defaults": {"k": k} for k in BASIC_K} if basic else grid()
    build = (_basic if basic else local_builder)(a.root, cache)
    done = json.loads(a.out.read_text(encoding="utf-8"))["configs"] if a.resume and a.out.exists() else {}
    results = run_configs(build, configs, questions, units, done, unquote=basic)
    argv_used = list(argv) if argv is not None else sys.argv[2:]
    out: dict[str, Any] = {
        "machine": machine.describe(),
        "command": "python -m bench gr-tune " + " ".join(argv_used),
        "system": "graphrag-basic" if basic else "graphrag-local",
        "questions": str(a.questions or "questions_dev.jsonl"),
        "budgets": list(BUDGETS),
        "entity_store": None if basic else "community entities",
        "recall": "CSV quoting undone (gr-basic's recall_unquoted)" if basic else "verbatim",
        "configs": results,
    }
    if a.chosen is None:
        scores = {name: _score(r["rows"]) for name, r in results.items()}
        cv = metrics.cross_validate(scores)
        best = max(scores, key=lambda c: (metrics.mean(scores[c]), -list(scores).index(c)))
        out["objective"] = "per question, evidence recall averaged over 2k/4k/8k/12k (as bench cv)"
        out["cv"] = cv
        out["tuned"] = {"name": best, "params": results[best]["params"], "score": metrics.mean(scores[best])}
        print("cv held-out", round(cv["held_out"], 3), "tuned on all dev:", best)
    else:
        out["chosen_from"] = str(a.chosen)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
