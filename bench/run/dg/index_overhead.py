"""Indexing overhead without LLM latency: `driftgraph index` on 1,000 chunks against an instant fake LLM,
then how incremental the index stays when passages that mention indexed entities are added.

    NEO4J_URI=bolt://127.0.0.1:7703 NEO4J_PASSWORD=... python -m bench index-overhead [--chunks 1000] \
        [--add 1,10] [--out bench/results/raw/index_incremental.json]

WIPES the driftgraph data of the Neo4j it points at. The corpus is the first N MuSiQue passages (one chunk
each at the default chunk size), written as one JSONL file. The fake OpenAI-compatible server runs in its
own process and answers at once (tests/support/index_responder.py: entities from capitalised words,
relationships within sentences), and vectors come from an in-process hash embedder (no model), so what
is measured is driftgraph's own work: loading, chunking, the HTTP client path and JSON parsing of every
LLM call, merging, summaries, Neo4j writes, Leiden, report contexts, and vector writes. The local MiniLM
embedder adds about 1 s per 40 texts on 2 cores on top (see bench/run/dg/import_speed.py). Peak RSS is this
process's (Neo4j and the fake server are other processes). A second run on the same input shows the cost
of a fully cached re-run.

Incremental part: passages after the first N whose names (as the fake extractor finds them) include an
entity already indexed are appended in steps (``--add 1,10``: one passage, then ten more), and each step
is an ordinary `index` run. Per step: communities in total, communities whose membership changed (ids not
in the database before), reports generated (and of those, reports of kept communities whose data changed),
their shares, chat calls and wall time. Then one more such passage goes in through the document API
(``engine.documents.add``) and out again (``delete``): the share of reports each regenerates. The same steps
(not the document ones) are then replayed with
``index.stable_communities: false`` (re-clustering the whole graph each run, the behaviour before stable
communities) from a cached rebuild of the first N, so both modes are measured in one invocation.
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

from bench.paths import ROOT, SHARED
from bench.run.machine import describe

DEFAULT_DATA = SHARED / "musique"

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


def _touching(data: Path, start: int, want: int) -> list[str]:
    """The first ``want`` passages from row ``start`` on that name an entity of the first ``start`` ones
    (as the fake extractor names them: same name, same entity)."""
    import pyarrow.parquet as pq

    sys.path.insert(0, str(ROOT))
    from tests.support.index_responder import extraction

    rows = pq.read_table(data / "text_units.parquet", columns=["text"]).to_pylist()
    names = lambda text: {e["title"].upper() for e in extraction(text)["entities"]}  # noqa: E731
    known = set().union(*(names(r["text"]) for r in rows[:start]))
    out = []
    for r in rows[start:]:
        if names(r["text"]) & known:
            out.append(r["text"])
            if len(out) == want:
                break
    return out


def _append(corpus: Path, texts: list[str]) -> None:
    with corpus.open("a", encoding="utf-8") as fh:
        for t in texts:
            fh.write(json.dumps({"text": t}, ensure_ascii=False) + "\n")


def _step(label: str, mode: str, s: dict, wall: float) -> dict:
    redone = s["redone"]
    total = s["communities"]
    changed = redone["communities"]["new"]
    generated = redone["reports_generated"]
    return {
        "run": label,
        "mode": mode,
        "documents": s["documents"],
        "wall_seconds": round(wall, 2),
        "stage_seconds": s["seconds"],
        "chat_calls": s["llm_calls"],
        "chat_calls_by_phase": {k: v["llm_calls"] for k, v in s["llm"].items() if k != "total"},
        "communities": total,
        "levels": s["levels"],
        "communities_changed": changed,
        "communities_removed": redone["communities"]["removed"],
        "changed_share": round(changed / total, 4) if total else 0.0,
        "reports_generated": generated,
        "reports_outdated": redone["reports_outdated"],
        "reports_reused": redone["reports_reused"],
        "regenerated_share": round(generated / total, 4) if total else 0.0,
        "failures": s["failures"]["count"],
    }


def _document_steps(rt, text: str) -> list[dict]:
    """One passage added through the document API, then deleted: what each change regenerates."""
    from driftgraph.index.documents import add_documents, delete_documents

    out = []
    t0 = time.perf_counter()
    added = add_documents(rt, text=text)
    out.append(_step("documents add 1", "document API", added.index.to_dict(), time.perf_counter() - t0))
    t0 = time.perf_counter()
    gone = delete_documents(rt, list(added.documents))
    out.append(_step("documents delete 1", "document API", gone.index.to_dict(), time.perf_counter() - t0))
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="driftgraph index overhead with an instant fake LLM")
    parser.add_argument("--chunks", type=int, default=1000)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--concurrency", type=int, default=None, help="index.concurrency (default: config)")
    parser.add_argument("--add", default="1,10", help="passages added per incremental step ('' for none)")
    parser.add_argument("--out", type=Path, default=None, help="also write the JSON result here")
    args = parser.parse_args(argv)
    adds = [int(x) for x in args.add.split(",") if x.strip()]

    from driftgraph.config import load_config
    from driftgraph.index.pipeline import run_index
    from driftgraph.runtime import Runtime
    from driftgraph.store.db import Store

    machine_before = describe()
    server = subprocess.Popen([sys.executable, "-c", _SERVER.format(root=str(ROOT))], stdout=subprocess.PIPE, text=True)
    try:
        base_url = server.stdout.readline().strip()
        with tempfile.TemporaryDirectory() as tmp:
            corpus = _corpus(args.data, args.chunks, Path(tmp))
            base_text = corpus.read_text(encoding="utf-8")
            cfg = load_config(None)
            cfg.llm.base_url = base_url
            cfg.llm.model = "fake-instant"
            cfg.index.cache_dir = str(Path(tmp) / "cache")
            if args.concurrency:
                cfg.index.concurrency = args.concurrency
            runs, steps = [], []
            with Store(cfg.neo4j) as store:
                store.run_auto("admin/reset")
                store.run_auto("admin/drop_schema")

                def index() -> tuple[dict, float]:
                    t0 = time.perf_counter()
                    s = run_index(Runtime(cfg, store=store, embedder=HashEmbedder()), corpus, progress=False).to_dict()
                    return s, time.perf_counter() - t0

                for label in ("cold", "cached rerun"):
                    s, wall = index()
                    runs.append(
                        {
                            "run": label,
                            "wall_seconds": round(wall, 2),
                            "stage_seconds": s["seconds"],
                            "llm_calls": s["llm_calls"],
                            "cache_hits": s["cache_hits"],
                            "counts": {k: s[k] for k in ("chunks", "entities", "relationships", "communities")}
                            | {"levels": s["levels"], "reports": s["reports"]},
                            "failures": s["failures"]["count"],
                        }
                    )
                extra = _touching(args.data, args.chunks, sum(adds) + 1) if adds else []
                for mode, stable in (("stable", True), ("re-cluster all", False)):
                    if not adds:
                        break
                    cfg.index.stable_communities = stable
                    if not stable:  # back to the first N passages, rebuilt from the call cache
                        corpus.write_text(base_text, encoding="utf-8")
                        store.run_auto("admin/reset")
                        index()
                    done = 0
                    for n in adds:
                        _append(corpus, extra[done : done + n])
                        done += n
                        s, wall = index()
                        steps.append(_step(f"+{n} passage{'s' if n > 1 else ''}", mode, s, wall))
                    if stable and len(extra) > done:
                        steps += _document_steps(Runtime(cfg, store=store, embedder=HashEmbedder()), extra[done])
    finally:
        server.terminate()
        server.wait(timeout=10)
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = {
        "bench": "index_overhead",
        "command": "python -m bench " + " ".join(sys.argv[1:]),
        "machine": machine_before,
        "load_after": " ".join(f"{x:.1f}" for x in os.getloadavg()),
        "chunks_requested": args.chunks,
        "runs": runs,
        "incremental": steps,
        "peak_rss_mb": round(peak_kb / 1024, 1),
        "goal": "cold run < 60 s and peak RSS < 1 GB; incremental: reports regenerated <= communities changed, "
        "<= 10% for 1 passage",
        "platform": {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform()},
    }
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
