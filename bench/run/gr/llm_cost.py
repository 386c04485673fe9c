"""GraphRAG 3.2.0 DRIFT and global search against the fake OpenAI-compatible server: calls and prompt tokens.

python -m bench gr-llm-cost --mode drift|global --root DIR --reps 3 --out X.json

Built the way ``graphrag.api.query.{drift,global}_search_streaming`` builds them (community level 2, the
factories ``get_drift_search_engine`` / ``get_global_search_engine`` with ``GraphRagConfig()`` defaults)
and run through ``stream_search`` as the CLI does. The chat model is litellm pointed at the fake server on
127.0.0.1; DRIFT's text embedder is the shared MiniLM (entity and report vectors from the cache) so it
ranks reports and entities like driftgraph does. GraphRAG's DRIFT is unseeded (``secrets.choice`` for the
HyDE template, ``random.shuffle`` in the query state), so each question runs ``--reps`` times.
"""

from __future__ import annotations

from bench.run.gr import offline

offline.setup()

import argparse  # noqa: E402
import asyncio  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from bench.run import data, fake_llm  # noqa: E402
from bench.run.embcache import EmbeddingCache  # noqa: E402
from bench.run.gr import common  # noqa: E402


def config(base_url: str, drift: dict | None = None):
    """``GraphRagConfig()`` pointed at the fake server; ``drift`` overrides ``drift_search`` (a call budget)."""
    from graphrag.config.models.drift_search_config import DRIFTSearchConfig
    from graphrag.config.models.graph_rag_config import GraphRagConfig

    model = {"model_provider": "openai", "model": "gpt-4.1", "api_base": base_url, "api_key": "bench"}
    emb = {"model_provider": "openai", "model": "text-embedding-3-small", "api_base": base_url, "api_key": "bench"}
    return GraphRagConfig(
        completion_models={"default_completion_model": model},
        embedding_models={"default_embedding_model": emb},
        drift_search=DRIFTSearchConfig(**(drift or {})),
    )


async def _drain(gen) -> str:
    out = ""
    async for chunk in gen:
        out += chunk
    return out


def drift_engine(cfg, idx: common.LoadedIndex, cache: EmbeddingCache):
    from graphrag.query.factory import get_drift_search_engine
    from graphrag.query.indexer_adapters import read_indexer_reports

    f = idx.frames
    reports = read_indexer_reports(f["community_reports"], f["communities"], common.COMMUNITY_LEVEL)
    vecs = cache.get([r.full_content or "" for r in reports], common.CachedEmbedder(cache)._embed_live)
    for r, v in zip(reports, vecs, strict=True):
        r.full_content_embedding = [float(x) for x in v]
    embedder = common.CachedEmbedder(cache)
    eng = get_drift_search_engine(
        config=cfg,
        reports=reports,
        text_units=idx.text_units,
        entities=idx.entities,
        relationships=idx.relationships,
        description_embedding_store=idx.store,
        response_type="Multiple Paragraphs",
    )
    eng.context_builder.text_embedder = embedder
    eng.context_builder.local_mixed_context.text_embedder = embedder
    return eng


def global_engine(cfg, root: Path, dynamic: bool):
    from graphrag.query.factory import get_global_search_engine
    from graphrag.query.indexer_adapters import read_indexer_communities, read_indexer_entities, read_indexer_reports

    f = common.read_frames(root)
    level = common.COMMUNITY_LEVEL
    return get_global_search_engine(
        cfg,
        reports=read_indexer_reports(f["community_reports"], f["communities"], level, dynamic),
        entities=read_indexer_entities(f["entities"], f["communities"], level),
        communities=read_indexer_communities(f["communities"], f["community_reports"]),
        response_type="Multiple Paragraphs",
        dynamic_community_selection=dynamic,
    )


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=("drift", "global"), required=True)
    ap.add_argument("--root", type=Path, default=data.DULCE)
    ap.add_argument("--questions", default=json.dumps(fake_llm.DULCE_QUESTIONS), help="JSON list of questions")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--model-id", default="all-MiniLM-L6-v2-int8")
    ap.add_argument("--n-depth", type=int, default=None, help="drift_search.n_depth (a matched call budget)")
    ap.add_argument("--k-followups", type=int, default=None, help="drift_search.drift_k_followups")
    ap.add_argument("--scenarios", default=None, help="comma-separated DRIFT scenarios (default: all)")
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args(argv)
    drift = {k: v for k, v in (("n_depth", a.n_depth), ("drift_k_followups", a.k_followups)) if v is not None}
    logging.disable(logging.WARNING)

    from tests.support.fake_openai import FakeOpenAI
    from tests.support.global_fake import responder as global_responder

    questions = json.loads(a.questions)
    cache = EmbeddingCache(a.model_id)
    fake = FakeOpenAI().start()
    rows = []
    try:
        cfg = config(fake.base_url, drift)
        if a.mode == "drift":
            idx = common.load_index(a.root, cache, "all")
            wanted = a.scenarios.split(",") if a.scenarios else None
            for scenario, responder in fake_llm.drift_scenarios().items():
                if wanted is not None and scenario not in wanted:
                    continue
                fake.responder = responder
                for q in questions:
                    for rep in range(a.reps):
                        fake.requests.clear()
                        eng = drift_engine(cfg, idx, cache)  # a fresh engine per question, as the API makes
                        t0 = time.perf_counter()
                        asyncio.run(_drain(eng.stream_search(query=q)))
                        seconds = time.perf_counter() - t0
                        kinds = [fake_llm.graphrag_drift_kind(r) for r in fake.chat_requests()]
                        steps = [r for r in fake.chat_requests() if fake_llm.graphrag_drift_kind(r) == "step"]
                        rows.append(
                            {
                                "question": q,
                                "scenario": scenario,
                                "rep": rep,
                                **fake_llm.chat_cost(fake.requests),
                                "hyde_calls": kinds.count("hyde"),
                                "primer_calls": kinds.count("primer"),
                                "step_calls": kinds.count("step"),
                                "reduce_calls": kinds.count("reduce"),
                                "distinct_step_questions": len({json.dumps(r["messages"][-1]) for r in steps}),
                                "step_questions": [fake_llm.step_question(r) for r in steps],
                                "step_layers": [fake_llm.layer_of(fake_llm.step_question(r)) for r in steps],
                                "embedding_calls": len(fake.requests) - len(fake.chat_requests()),
                                "seconds": seconds,
                            }
                        )
        else:
            fake.responder = global_responder
            for mode in ("full", "dynamic"):
                for q in questions:
                    fake.requests.clear()
                    eng = global_engine(cfg, a.root, mode == "dynamic")
                    t0 = time.perf_counter()
                    asyncio.run(_drain(eng.stream_search(query=q)))
                    rows.append(
                        {
                            "question": q,
                            "mode": mode,
                            **fake_llm.chat_cost(fake.requests),
                            "seconds": time.perf_counter() - t0,
                        }
                    )
    finally:
        fake.stop()
    a.out.parent.mkdir(parents=True, exist_ok=True)
    from bench.run import machine

    payload = {
        "system": f"graphrag-{a.mode}",
        "data": a.root.name,
        "drift_search": drift,
        "machine": machine.describe(),
        "command": "python -m bench gr-llm-cost " + " ".join(argv if argv is not None else sys.argv[2:]),
        "rows": rows,
    }
    a.out.write_text(json.dumps(payload, indent=1))
