"""``python -m bench gr-contexts``: GraphRAG 3.2.0 local search's system prompt for each question, filled with its
context as its ``LocalSearch`` would send it, for ``bench answers``' ``graphrag_local`` mode to ask the model.

python -m bench gr-contexts --budget 2000 --response-type TEXT [--questions F] [--defaults] --out X.json

The knobs are the tuned ones (``--chosen``, default the committed ``graphrag_tuned_local.json``: the strongest
GraphRAG local measured here), or GraphRAG's defaults with ``--defaults``. The output holds GraphRAG's prompt
text: it is a working file under ``bench/.cache``, never committed.
"""

from __future__ import annotations

from bench.run.gr import offline

offline.setup()

import argparse  # noqa: E402
import json  # noqa: E402
from pathlib import Path  # noqa: E402

from bench import paths  # noqa: E402
from bench.run import data  # noqa: E402
from bench.run.embcache import EmbeddingCache  # noqa: E402
from bench.run.gr import tune  # noqa: E402

TUNED = paths.RAW / "graphrag_tuned_local.json"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench gr-contexts", description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, default=data.MUSIQUE)
    ap.add_argument("--questions", type=Path, default=None, help="question file (default: the dev split)")
    ap.add_argument("--budget", type=int, default=2000, help="max_context_tokens")
    ap.add_argument("--response-type", required=True, help="the prompt's {response_type}")
    ap.add_argument("--chosen", type=Path, default=TUNED, help="a gr-tune sweep whose tuned knobs to use")
    ap.add_argument("--defaults", action="store_true", help="GraphRAG's default knobs instead of the tuned ones")
    ap.add_argument("--model-id", default="all-MiniLM-L6-v2-int8")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)
    from graphrag.prompts.query.local_search_system_prompt import LOCAL_SEARCH_SYSTEM_PROMPT

    knobs = dict(tune.DEFAULTS) if a.defaults else json.loads(a.chosen.read_text(encoding="utf-8"))["tuned"]["params"]
    build = tune.local_builder(a.root, EmbeddingCache(a.model_id))
    rows = []
    for q in data.questions(a.questions) if a.questions else data.questions():
        context = build(q.question, a.budget, knobs)
        system = LOCAL_SEARCH_SYSTEM_PROMPT.format(context_data=context, response_type=a.response_type)
        rows.append({"id": q.id, "context": context, "system": system})
    out = {"budget": a.budget, "knobs": "defaults" if a.defaults else "tuned", "params": knobs, "rows": rows}
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps(out, ensure_ascii=False) + "\n", encoding="utf-8")
