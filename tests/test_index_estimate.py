"""`index --estimate`: per-stage calls, tokens and price with no chat call; exact once extraction is cached."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from driftgraph.api import Engine
from driftgraph.index.estimate import estimate_index
from tests.conftest import make_config
from tests.support.index_responder import responder

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "docs"
INDEX = {"chunk_size": 80, "chunk_overlap": 10, "claims": True, "description_max_tokens": 60, "concurrency": 3}


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    shutil.copytree(EXAMPLES, docs)
    return docs


def _cfg(fake_llm, tmp_path, neo4j_config=None, model="gpt-4o-mini"):
    fake_llm.responder = responder
    return make_config(
        neo4j_config,
        llm={"base_url": fake_llm.base_url, "model": model, "backoff_base_s": 0.0},
        index={**INDEX, "cache_dir": str(tmp_path / "cache")},
    )


def _stages(est: dict) -> dict[str, dict]:
    return {s["stage"]: s for s in est["stages"]}


def test_cold_estimate_makes_no_chat_call_and_bounds_every_stage(fake_llm, corpus, tmp_path):
    cfg = _cfg(fake_llm, tmp_path)
    est = estimate_index(cfg, corpus)
    assert fake_llm.chat_requests() == [], "an estimate never calls the model"
    st = _stages(est)
    n = est["chunks"]
    assert n >= 8 and est["documents"] == 4
    assert st["extract"]["calls"] == n and st["extract"]["cached"] == 0 and st["extract"]["basis"] == "counted"
    assert st["extract"]["completion_tokens_max"] == n * cfg.index.extract_max_tokens
    assert st["extract_gleaning"]["calls"] == n * cfg.index.max_gleanings
    # a gleaning round's prompt holds the first answer, counted at its cap
    assert st["extract_gleaning"]["prompt_tokens"] > st["extract"]["prompt_tokens"] + n * cfg.index.extract_max_tokens
    assert st["extract_claims"]["calls"] == n
    assert st["summarize"]["basis"] == st["report"]["basis"] == "heuristic" and st["report"]["calls"] > 0
    price = cfg.index.prices["gpt-4o-mini"]
    ex = st["extract"]
    assert ex["price_usd"] == round(
        (ex["prompt_tokens"] * price.prompt + ex["completion_tokens_max"] * price.completion) / 1e6, 4
    )
    assert est["total"]["calls"] == sum(s["calls"] for s in est["stages"]) and est["total"]["price_usd"] > 0

    # the expected figures: never above the bound, replies at their typical size, gleaning history at that size
    icfg = cfg.index
    typical = (icfg.estimate_entities_per_chunk + icfg.estimate_relationships_per_chunk) * icfg.estimate_record_tokens
    assert ex["expected_completion_tokens"] == n * min(icfg.extract_max_tokens, round(typical))
    for s in est["stages"]:
        assert s["expected_calls"] <= s["calls"], s["stage"]
        assert s["expected_prompt_tokens"] <= s["prompt_tokens"], s["stage"]
        assert s["expected_completion_tokens"] <= s["completion_tokens_max"], s["stage"]
    glean = st["extract_gleaning"]
    saved = glean["prompt_tokens"] - glean["expected_prompt_tokens"]
    assert saved == n * (icfg.extract_max_tokens - min(icfg.extract_max_tokens, round(typical))), (
        "the only difference: the first answer in each gleaning round's history, at its typical size"
    )
    assert est["total"]["expected_prompt_tokens"] == sum(s["expected_prompt_tokens"] for s in est["stages"])
    assert 0 < est["total"]["expected_price_usd"] < est["total"]["price_usd"]


def test_expected_summaries_need_enough_chunks_to_pass_the_description_cap(fake_llm, corpus, tmp_path):
    """Each chunk adds at most one description to an entity: with too few chunks no merged description can pass
    ``description_max_tokens``, so none is expected to be summarised (the bound still counts them)."""
    cfg = _cfg(fake_llm, tmp_path)
    few = cfg.model_copy(update={"index": cfg.index.model_copy(update={"description_max_tokens": 10_000})})
    st = _stages(estimate_index(few, corpus))
    assert st["summarize"]["calls"] > 0 and st["summarize"]["expected_calls"] == 0
    assert st["summarize"]["expected_prompt_tokens"] == 0
    many = _stages(estimate_index(cfg, corpus))  # description_max_tokens 60: a few chunks' descriptions pass it
    assert many["summarize"]["expected_calls"] == many["summarize"]["calls"] > 0
    assert 0 < many["summarize"]["expected_prompt_tokens"] < many["summarize"]["prompt_tokens"]


def test_batch_estimate_applies_the_batch_price_factor(fake_llm, corpus, tmp_path):
    cfg = _cfg(fake_llm, tmp_path)
    direct, batch = estimate_index(cfg, corpus), estimate_index(cfg, corpus, batch=True)
    assert batch["batch"] is True and batch["total"]["calls"] == direct["total"]["calls"]
    for d, b in zip(direct["stages"], batch["stages"], strict=True):
        assert b["price_usd"] == pytest.approx(d["price_usd"] * cfg.index.batch_price_factor, abs=2e-4)


def test_unknown_model_has_no_price_and_says_so(fake_llm, corpus, tmp_path):
    est = estimate_index(_cfg(fake_llm, tmp_path, model="my-local-model"), corpus)
    assert est["total"]["price_usd"] is None and "my-local-model" in est["note"]


def test_after_a_run_the_estimate_is_exact_and_costs_nothing(neo4j_cfg, neo4j_config, fake_llm, corpus, tmp_path):
    """The dry client keys the cache exactly like the real one: after a direct run every call is a cached hit,
    stage by stage as many as the run made; and the cold estimate bounded that run from above."""
    cfg = _cfg(fake_llm, tmp_path, neo4j_config)
    cold = _stages(estimate_index(cfg, corpus))
    with Engine(cfg) as eng:
        run = eng.index(corpus)
    assert run.failures.count == 0
    calls = len(fake_llm.chat_requests())
    warm = estimate_index(cfg, corpus)
    assert len(fake_llm.chat_requests()) == calls
    st = _stages(warm)
    assert warm["total"]["calls"] == 0 and warm["total"]["price_usd"] == 0
    for phase, used in run.llm.items():
        if phase == "total" or not used.get("llm_calls"):
            continue
        assert st[phase]["cached"] == used["llm_calls"], phase
        assert st[phase]["basis"] == "counted"
        if phase.startswith("extract"):
            assert cold[phase]["calls"] >= used["llm_calls"], phase
            assert cold[phase]["completion_tokens_max"] >= used["completion_tokens"], phase


def test_with_the_extraction_cached_each_missing_report_is_one_call(
    neo4j_cfg, neo4j_config, fake_llm, corpus, tmp_path
):
    """Reports counted on the real graph: one call per community without a report, not two (a placeholder reply
    that failed the report parser was counted again as its repair)."""
    cfg = _cfg(fake_llm, tmp_path, neo4j_config)
    none = cfg.model_copy(update={"index": cfg.index.model_copy(update={"report_min_size": 10_000})})
    with Engine(none) as eng:
        run = eng.index(corpus)
    assert run.reports == 0 and run.communities > 0 and run.failures.count == 0
    report = _stages(estimate_index(cfg, corpus))["report"]
    assert report["basis"] == "counted" and report["cached"] == 0
    assert report["calls"] == report["expected_calls"] == run.communities


def test_cli_estimate_and_confirm(neo4j_cfg, neo4j_config, fake_llm, corpus, tmp_path):
    cfg = _cfg(fake_llm, tmp_path, neo4j_config)
    conf = tmp_path / "driftgraph.yaml"
    conf.write_text(yaml.safe_dump({"llm": cfg.llm.model_dump(), "index": cfg.index.model_dump()}))
    env = {**os.environ, "NEO4J_URI": neo4j_config["uri"], "NEO4J_PASSWORD": neo4j_config["password"], "COLUMNS": "150"}
    base = [sys.executable, "-m", "driftgraph", "index", str(corpus), "--config", str(conf)]
    res = subprocess.run([*base, "--estimate", "--json"], env=env, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["total"]["calls"] > 0
    table = subprocess.run([*base, "--estimate"], env=env, capture_output=True, text=True, timeout=300)
    assert "extract_gleaning" in table.stdout and "total" in table.stdout
    assert "expected" in table.stdout and "calls ≤" in table.stdout, "both figures, named"
    no = subprocess.run([*base, "--confirm"], env=env, input="n\n", capture_output=True, text=True, timeout=300)
    assert no.returncode == 1 and "Run the index?" in no.stderr and "extract" in no.stdout
    assert fake_llm.chat_requests() == [], "declining runs nothing"
    yes = subprocess.run([*base, "--confirm"], env=env, input="y\n", capture_output=True, text=True, timeout=600)
    assert yes.returncode == 0, yes.stderr
    assert len(fake_llm.chat_requests()) > 0
