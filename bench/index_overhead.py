"""Indexing overhead without LLM latency: `driftgraph index` on 1,000 chunks against an instant fake LLM.

    NEO4J_URI=bolt://127.0.0.1:7703 NEO4J_PASSWORD=... python -m bench.index_overhead [--chunks 1000]

WIPES the driftgraph data of the Neo4j it points at. The corpus is the first N MuSiQue passages (one chunk
each at the default chunk size), written as one JSONL file. The fake OpenAI-compatible server runs in its
own process and answers at once (tests/support/index_responder.py: entities from capitalised words,
relationships within sentences), and vectors come from an in-process hash embedder (no model), so what
is measured is driftgraph's own work: loading, chunking, the HTTP client path and JSON parsing of every
LLM call, merging, summaries, Neo4j writes, Leiden, report contexts, and vector writes. The local MiniLM
embedder adds about 1 s per 40 texts on 2 cores on top (see bench/import_speed.py). Peak RSS is this
process's (Neo4j and the fake server are other processes). A second run on the same input shows the cost
of a fully cached re-run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "musique"

_SERVER = """
import sys, time
sys.path.insert(0, {root!r})
from tests.support.fake_openai import FakeOpenAI
from tests.support.index_responder import responder
srv = FakeOpenAI(responder).start()
print(srv.base_url, flush=True)
while True:
    time.sleep(3600)
"""


class HashEmbedder:
    """Deterministic unit vectors from each text's sha256: the embedder interface at no model cost."""

    model_id = "bench-hash-384"
    dimensions = 384

    def embed(self, texts):
        import hashlib

        import numpy as np

        out = np.empty((len(texts), self.dimensions), dtype=np.float32)
        for i, t in enumerate(texts):
            seed = int.from_bytes(hashlib.sha256(t.encode()).digest()[:8], "little")
            v = np.random.default_rng(seed).standard_normal(self.dimensions)
            out[i] = v / np.linalg.norm(v)
        return out


def _corpus(data: Path, n: int, out: Path) -> Path:
    import pyarrow.parquet as pq

    rows = pq.read_table(data / "text_units.parquet", columns=["text"]).slice(0, n).to_pylist()
    path = out / "passages.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps({"text": r["text"]}, ensure_ascii=False) + "\n")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description="driftgraph index overhead with an instant fake LLM")
    parser.add_argument("--chunks", type=int, default=1000)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--concurrency", type=int, default=None, help="index.concurrency (default: config)")
    args = parser.parse_args()

    from driftgraph.config import load_config
    from driftgraph.index.pipeline import run_index
    from driftgraph.runtime import Runtime
    from driftgraph.store.db import Store

    server = subprocess.Popen([sys.executable, "-c", _SERVER.format(root=str(ROOT))], stdout=subprocess.PIPE, text=True)
    try:
        base_url = server.stdout.readline().strip()
        with tempfile.TemporaryDirectory() as tmp:
            corpus = _corpus(args.data, args.chunks, Path(tmp))
            cfg = load_config(None)
            cfg.llm.base_url = base_url
            cfg.llm.model = "fake-instant"
            cfg.index.cache_dir = str(Path(tmp) / "cache")
            if args.concurrency:
                cfg.index.concurrency = args.concurrency
            runs = []
            with Store(cfg.neo4j) as store:
                store.run_auto("admin/reset")
                store.run_script("admin/drop_schema")
                for label in ("cold", "cached rerun"):
                    t0 = time.perf_counter()
                    s = run_index(Runtime(cfg, store=store, embedder=HashEmbedder()), corpus, progress=False)
                    runs.append(
                        {
                            "run": label,
                            "wall_seconds": round(time.perf_counter() - t0, 2),
                            "stage_seconds": s["seconds"],
                            "llm_calls": s["llm_calls"],
                            "cache_hits": s["cache_hits"],
                            "counts": {k: s[k] for k in ("chunks", "entities", "relationships", "communities")}
                            | {"levels": s["levels"], "reports": s["reports"]},
                            "failures": s["failures"]["count"],
                        }
                    )
    finally:
        server.terminate()
        server.wait(timeout=10)
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = {
        "bench": "index_overhead",
        "chunks_requested": args.chunks,
        "runs": runs,
        "peak_rss_mb": round(peak_kb / 1024, 1),
        "goal": "cold run < 60 s and peak RSS < 1 GB",
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
