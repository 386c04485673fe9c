"""Rebuild examples/sample-index/ (GraphRAG parquet) from examples/docs/ and hand-written LLM answers.

The answers in examples/sample-answers.json were written by reading each document (extraction) and each
community's data (reports). This script replays them through the real pipeline — a local
OpenAI-compatible server answers with them — so the sample index is exactly what `driftgraph index`
makes of those answers, then exports it with `driftgraph export-graphrag`'s writer.

Needs a Neo4j it may wipe: NEO4J_URI / NEO4J_PASSWORD. Usage:
    python scripts/build_sample_index.py [--out examples/sample-index]
A community without a written report stops the run and prints its data, so its report can be written.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from driftgraph.config import load_config  # noqa: E402
from tests.support.fake_openai import FakeOpenAI  # noqa: E402

_DATA = re.compile(r"######## (?:TEXT|DATA) ########\n(.*?)\n######## END", re.S)


def community_key(data: str) -> str:
    """Sorted entity titles of the report context's Entities table."""
    section = data.split("-----Entities-----\n", 1)[1].split("\n-----", 1)[0]
    rows = list(csv.reader(io.StringIO(section)))
    return "|".join(sorted(r[1] for r in rows[1:] if len(r) > 1))


class Answers:
    def __init__(self, answers: dict[str, Any], docs: Path) -> None:
        self.extractions = {(docs / name).read_text(encoding="utf-8"): v for name, v in answers["extractions"].items()}
        self.reports = answers["reports"]
        self.missing: dict[str, str] = {}

    def __call__(self, request: dict[str, Any]) -> str:
        name = ((request.get("response_format") or {}).get("json_schema") or {}).get("name")
        m = _DATA.search(request["messages"][0]["content"])
        data = m.group(1) if m else ""
        if name == "extract_graph":
            if len(request["messages"]) > 1:
                return json.dumps({"entities": [], "relationships": []})
            return json.dumps(self.extractions[data])
        if name == "community_report":
            key = community_key(data)
            if key not in self.reports:
                self.missing[key] = data
                return json.dumps({"title": "MISSING", "summary": "", "rating": 0, "rating_explanation": "",
                                   "findings": []})  # fmt: skip
            return json.dumps(self.reports[key])
        raise RuntimeError(f"no hand-written answer for a '{name}' request")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "examples" / "sample-index")
    args = parser.parse_args()
    docs = ROOT / "examples" / "docs"
    answers = Answers(json.loads((ROOT / "examples" / "sample-answers.json").read_text(encoding="utf-8")), docs)
    server = FakeOpenAI(answers).start()
    try:
        with tempfile.TemporaryDirectory() as cache:
            cfg = load_config(None)
            cfg.llm.base_url = server.base_url
            cfg.llm.model = "hand-written"
            cfg.index.cache_dir = cache
            from driftgraph.api import Engine

            with Engine(cfg) as eng:
                eng.store.run_auto("admin/reset")
                summary = eng.index(docs)
                if answers.missing:
                    for key, data in answers.missing.items():
                        print(f"== no report for community {key}\n{data}\n")
                    return 1
                for old in args.out.glob("*.parquet"):
                    old.unlink()
                exported = eng.export_graphrag(args.out)
    finally:
        server.stop()
    keep = ("documents", "chunks", "entities", "relationships", "communities", "reports", "llm_calls")
    print(json.dumps({k: summary.to_dict()[k] for k in keep} | {"exported": exported.rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
