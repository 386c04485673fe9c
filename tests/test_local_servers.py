"""Local model servers (Ollama, vLLM, llama.cpp's server) through OPENAI_BASE_URL: index the sample corpus and
run local, global and DRIFT search against a fake that answers the way each server does
(tests/support/server_profiles.py), with the real openai client and a real Neo4j.

The model's answers are the hand-written ones the committed sample index was built from, so whatever the
server refuses along the way (json_schema, json_object, usage in streams), the graph must come out exactly
as the sample's: 13 entities, 29 relationships, 4 communities with reports.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from driftgraph.api import Engine
from driftgraph.errors import EmbedderError, FatalLLMError, LLMRequestRejected
from driftgraph.llm import compat
from driftgraph.llm.embedder import OpenAIEmbedder
from tests.conftest import make_config
from tests.support.drift_fakes import tree_responder
from tests.support.fake_openai import FakeOpenAI
from tests.support.global_fake import responder as global_responder
from tests.support.global_fake import schema_name
from tests.support.server_profiles import LLAMACPP, MODELS, PROFILES, VLLM, reads_prompts

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "examples" / "docs"
ANSWER = "Kelmouth's tidal scheme is run by the Tidewater Grid Cooperative [Data: Sources (1)]."
QUESTION = "Who runs the tidal power scheme of Kelmouth?"
# llama.cpp builds that know neither json_schema nor json_object: every structured reply is JSON in prose
PLAIN = dataclasses.replace(LLAMACPP, name="llamacpp-plain", json_object="refuse")


def _answers() -> Any:
    spec = importlib.util.spec_from_file_location("build_sample_index", ROOT / "scripts" / "build_sample_index.py")
    assert spec is not None and spec.loader is not None
    build = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(build)
    return build.Answers(json.loads((ROOT / "examples" / "sample-answers.json").read_text(encoding="utf-8")), DOCS)


def sample_world() -> Any:
    """Extraction and reports as hand-written for the sample; global and DRIFT by the suites' own fakes."""
    answers, drift = _answers(), tree_responder(n_follow=2, max_level=1)

    def respond(request: dict[str, Any]) -> str:
        name = schema_name(request)
        if name in ("extract_graph", "community_report"):
            return str(answers(request))
        if name == "extract_claims":
            return '{"claims": []}'
        if name in ("report_ratings", "key_points"):
            return global_responder(request)
        if name in ("drift_primer", "drift_step"):
            return drift(request)
        return ANSWER

    return respond


@pytest.fixture(params=["ollama", "vllm", "llamacpp", "llamacpp-python", "llamacpp-plain"])
def server(request: pytest.FixtureRequest) -> Any:
    compat.forget_all()
    profile = PLAIN if request.param == "llamacpp-plain" else PROFILES[request.param]
    fake = FakeOpenAI(reads_prompts(sample_world()), profile=profile).start()
    yield fake
    fake.stop()


def _cfg(neo4j_config: dict, fake: FakeOpenAI, tmp_path: Path, **llm: Any) -> Any:
    assert fake.profile is not None
    chat_model = MODELS[fake.profile.name.split("-")[0]][0]
    return make_config(
        neo4j_config,
        llm={"base_url": fake.base_url, "model": chat_model, "backoff_base_s": 0.0, "max_retries": 0, **llm},
        index={"cache_dir": str(tmp_path / "cache")},
    )


def _formats_one(request: dict[str, Any]) -> str | None:
    return (request.get("response_format") or {}).get("type")


def _formats(fake: FakeOpenAI, since: int = 0) -> list[str | None]:
    return [_formats_one(r) for r in fake.chat_requests()[since:]]


def test_index_local_global_drift_through_each_server(neo4j_cfg, neo4j_config, server, tmp_path):
    profile = server.profile
    with Engine(_cfg(neo4j_config, server, tmp_path)) as eng:
        s = eng.index(DOCS)
        assert s.failures.count == 0
        got = (s.entities, s.relationships, s.communities, s.reports)
        assert got == (13, 29, 4, 4), "the graph is the committed sample's whatever the server refused"
        sent = _formats(server)
        fallbacks = s.llm["total"]["format_fallbacks"]
        structured = sent.count("json_schema") + sent.count("json_object")
        if profile.json_schema == "honour":
            assert fallbacks == 0 and "json_object" not in sent and sent.count("json_schema") > 0
        elif profile.json_object == "honour":
            # refused once per call in flight when the refusal was learnt (index.concurrency), never again
            assert 1 <= sent.count("json_schema") == fallbacks <= eng.config.index.concurrency
            assert sent.count("json_object") >= 8, "extractions and reports went out as json_object"
            shaped = [r["response_format"] for r in server.chat_requests() if _formats_one(r) == "json_object"]
            assert all(f.get("schema", {}).get("properties") for f in shaped), "json_object carries the schema"
        else:
            assert sent.count("json_schema") >= 1 and sent.count("json_object") >= 1
            assert fallbacks == structured, "each refused request was re-sent once in the next weaker form"
            assert sent[-1] is None, "and after that in plain text, the JSON read from the prose"

        before = len(server.chat_requests())
        pieces: list[str] = []
        local = eng.query_local(QUESTION, on_token=pieces.append)
        assert local.answer == ANSWER == "".join(pieces) and local.context.tokens > 0
        answer_cost = local.cost.phases["answer"]
        assert answer_cost["prompt_tokens"] > 0 and answer_cost["completion_tokens"] > 0
        no_usage = profile.stream_usage == "never"
        assert answer_cost["estimated_calls"] == int(no_usage), "counted by tiktoken where the stream had none"

        again = eng.query_local(QUESTION, on_token=pieces.append).cost.phases["answer"]
        assert again["prompt_tokens"] > 0, "a server's 0 for a cached prompt is not taken as free"
        assert again["estimated_calls"] == int(no_usage or profile.zero_cached_prompt)

        glob = eng.query_global("What do the communities say about Kelmouth and the tidal scheme?")
        assert glob.answer == ANSWER and glob.batches and all(b.status == "done" for b in glob.batches)

        drift = eng.query_drift(QUESTION, max_depth=1, max_llm_calls=8)
        assert drift.answer and any(step.status == "done" for step in drift.steps)
        after = _formats(server, before)
        if profile.json_schema == "refuse":
            assert "json_schema" not in after, "the refusal learnt while indexing is not tried again"
        else:
            assert "json_schema" in after


def test_unknown_model_name_is_one_line_naming_the_key(neo4j_cfg, neo4j_config, tmp_path):
    """Ollama and vLLM refuse a name they do not serve (the default gpt-4o-mini): a fatal 404 naming llm.model."""
    for profile in (PROFILES["ollama"], VLLM):
        fake = FakeOpenAI(reads_prompts(sample_world()), profile=profile).start()
        try:
            cfg = _cfg(neo4j_config, fake, tmp_path, model="gpt-4o-mini")
            with Engine(cfg) as eng, pytest.raises(FatalLLMError, match=r"answered 404: unknown model 'gpt-4o-mini'"):
                eng.index(DOCS)
        finally:
            fake.stop()


@pytest.mark.parametrize("name", ["ollama", "vllm", "llamacpp"])
def test_embeddings_endpoint_of_each_server(name):
    """Each server's own embedding model and size work as configured; no ``dimensions`` sent to them."""
    compat.forget_all()
    profile = PROFILES[name]
    fake = FakeOpenAI(profile=profile).start()
    try:
        cfg = make_config(
            llm={"base_url": fake.base_url},
            embeddings={"provider": "openai", "model": MODELS[name][1], "dimensions": profile.native_dims},
        )
        vectors = OpenAIEmbedder(cfg.embeddings, cfg.llm).embed(["Kelmouth", "Corran Foundry"])
        assert vectors.shape == (2, profile.native_dims)
        assert all("dimensions" not in r for r in fake.requests)
    finally:
        fake.stop()


def test_vllm_refusing_dimensions_is_learnt_once():
    """A vLLM model served as text-embedding-3-small without matryoshka training refuses ``dimensions``."""
    compat.forget_all()
    profile = dataclasses.replace(VLLM, models=("text-embedding-3-small",))
    fake = FakeOpenAI(profile=profile).start()
    try:
        cfg = make_config(
            llm={"base_url": fake.base_url, "max_retries": 0},
            embeddings={"provider": "openai", "model": "text-embedding-3-small", "dimensions": 384, "batch_size": 1},
        )
        vectors = OpenAIEmbedder(cfg.embeddings, cfg.llm).embed(["a", "b", "c"])
        assert vectors.shape == (3, 384)
        sent = [("dimensions" in r) for r in fake.requests]
        assert sent == [True, False, False, False], "refused once, then never sent again"
    finally:
        fake.stop()


def test_llamacpp_ignoring_dimensions_names_the_size_to_configure():
    compat.forget_all()
    fake = FakeOpenAI(profile=LLAMACPP).start()
    try:
        cfg = make_config(
            llm={"base_url": fake.base_url}, embeddings={"provider": "openai", "model": "text-embedding-3-small"}
        )
        with pytest.raises(EmbedderError, match=r"returned 768-d vectors.*set embeddings.dimensions: 768"):
            OpenAIEmbedder(cfg.embeddings, cfg.llm).embed(["Kelmouth"])
    finally:
        fake.stop()


def test_embeddings_on_an_endpoint_of_their_own():
    """llama.cpp and vLLM serve one model each: ``embeddings.base_url`` points at the embedding server."""
    compat.forget_all()
    chat, embed = FakeOpenAI(profile=LLAMACPP).start(), FakeOpenAI(profile=LLAMACPP).start()
    try:
        cfg = make_config(
            llm={"base_url": chat.base_url},
            embeddings={
                "provider": "openai",
                "base_url": embed.base_url,
                "model": "nomic-embed-text-v1.5",
                "dimensions": 768,
            },  # fmt: skip
        )
        assert OpenAIEmbedder(cfg.embeddings, cfg.llm).embed(["Kelmouth"]).shape == (1, 768)
        assert [r["_path"] for r in embed.requests] == ["/v1/embeddings"] and chat.requests == []
    finally:
        chat.stop()
        embed.stop()


def test_vllm_context_limit_is_met_by_model_context_window(neo4j_cfg, neo4j_config, tmp_path):
    """vLLM refuses prompt + max_tokens over --max-model-len: the default 128k window overflows a 4k server,
    ``llm.model_context_window`` a little under it (tokenizers differ) makes local search fit."""
    compat.forget_all()
    fake = FakeOpenAI(lambda req: ANSWER, profile=dataclasses.replace(VLLM, max_context=4096)).start()
    try:
        with Engine(_cfg(neo4j_config, fake, tmp_path)) as eng:
            eng.import_graphrag(ROOT / "examples" / "sample-index")
            refused = r"refused the request \(400\).*maximum context length is 4096 tokens.*llm\.model_context_window"
            with pytest.raises(LLMRequestRejected, match=refused):
                eng.query_local(QUESTION)
        with Engine(_cfg(neo4j_config, fake, tmp_path, model_context_window=3686)) as eng:
            res = eng.query_local(QUESTION)
        assert res.answer == ANSWER and res.trace.budget is not None and res.trace.budget.window == 3686
        assert 1000 < res.context.tokens < 2500, "the context shrank to fit the server's window"
    finally:
        fake.stop()


def test_a_refusal_that_is_not_about_the_format_is_not_a_fallback():
    """A 400 for a too-long prompt on a json_schema call fails that call: no re-send, nothing learnt."""
    from driftgraph.config import LLMConfig
    from driftgraph.llm.chat import ChatClient, schema
    from driftgraph.llm.ledger import Ledger

    compat.forget_all()
    fake = FakeOpenAI(profile=dataclasses.replace(VLLM, max_context=1024)).start()
    try:
        cfg = LLMConfig(base_url=fake.base_url, model=MODELS["vllm"][0], max_retries=0)
        chat = ChatClient(cfg, Ledger())
        s = schema("answer", {"score": {"type": "integer"}})
        with pytest.raises(LLMRequestRejected, match="maximum context length"):
            chat.complete([{"role": "user", "content": "word " * 800}], phase="p", max_tokens=500, json_schema=s)
        assert len(fake.chat_requests()) == 1 and chat.ledger.total.format_fallbacks == 0
        assert compat.notes_for(cfg).structured == "json_schema"
    finally:
        fake.stop()


def test_llamacpp_python_500_refusal_of_json_schema_is_a_fallback_not_an_outage():
    """llama-cpp-python answers json_schema with a 500 whose body is a validation error naming response_format:
    recognised by its words, not retried as an outage, re-sent at once as json_object carrying the schema."""
    from driftgraph.config import LLMConfig
    from driftgraph.llm.chat import ChatClient, schema
    from driftgraph.llm.ledger import Ledger

    compat.forget_all()
    fake = FakeOpenAI(lambda req: '{"score": 7}', profile=PROFILES["llamacpp-python"]).start()
    try:
        cfg = LLMConfig(base_url=fake.base_url, model=MODELS["llamacpp-python"][0], max_retries=3, backoff_base_s=0)
        chat = ChatClient(cfg, Ledger())
        s = schema("answer", {"score": {"type": "integer"}})
        reply = chat.complete([{"role": "user", "content": "q"}], phase="p", max_tokens=20, json_schema=s)
        assert reply.text == '{"score": 7}'
        sent = [r["response_format"] for r in fake.chat_requests()]
        assert [f["type"] for f in sent] == ["json_schema", "json_object"], "one refusal, no retries of the 500"
        assert sent[1]["schema"] == s["schema"], "the grammar-backed json_object gets the schema"
        total = chat.ledger.total
        assert (total.retries, total.format_fallbacks, total.failed_calls) == (0, 1, 0)
        assert compat.notes_for(cfg).structured == "json_object_schema"
        chat.complete([{"role": "user", "content": "q2"}], phase="p", max_tokens=20, json_schema=s)
        assert fake.chat_requests()[-1]["response_format"]["type"] == "json_object", "learnt: not tried again"
    finally:
        fake.stop()


def test_a_deterministic_refusal_quotes_the_server_and_names_the_setting():
    """A server that refuses every structured form with a 500 validation error, and a plain request with one
    too (here: a max_tokens it does not accept): the one line quotes its message, names the setting to
    change and never says to try again later."""
    from driftgraph.config import LLMConfig
    from driftgraph.llm.chat import ChatClient
    from driftgraph.llm.ledger import Ledger

    compat.forget_all()
    fake = FakeOpenAI(profile=PROFILES["llamacpp-python"]).start()
    message = (
        "1 validation error for CreateChatCompletionRequest\nmax_tokens\n  Input should be less than or equal "
        "to 4096 [type=less_than_equal, input_value=100000, input_type=int]"
    )
    fake.set_fault("status:500")
    fake.fault_body = {"error": {"message": message, "type": "internal_server_error", "param": None, "code": None}}
    try:
        cfg = LLMConfig(base_url=fake.base_url, model="m", max_retries=3, backoff_base_s=0)
        chat = ChatClient(cfg, Ledger())
        with pytest.raises(LLMRequestRejected) as info:
            chat.complete([{"role": "user", "content": "q"}], phase="p", max_tokens=100000)
        line = str(info.value)
        assert "refused the request (500)" in line and "Input should be less than or equal to 4096" in line
        assert "llm.max_tokens" in line and "try again" not in line
        assert len(fake.chat_requests()) == 1, "a validation error is not retried"
    finally:
        fake.stop()


@pytest.mark.parametrize(
    ("name", "sends"),
    [("vllm", "json_schema"), ("llamacpp", "json_object_schema"), ("llamacpp-python", "json_object_schema")],
)
def test_doctor_probe_names_the_form_each_server_takes(name, sends):
    from driftgraph.config import LLMConfig
    from driftgraph.llm.probe import probe_structured

    compat.forget_all()
    fake = FakeOpenAI(lambda req: '{"ok": true}', profile=PROFILES[name]).start()
    try:
        cfg = LLMConfig(base_url=fake.base_url, model=MODELS[name][0], max_retries=2, backoff_base_s=0)
        got = probe_structured(cfg)
        assert got.sends == sends and got.fallbacks == int(sends != "json_schema") and got.error is None
        assert len(fake.chat_requests()) == 1 + got.fallbacks, "one probe, one re-send per refusal, no retries"
        assert got.line() == sends + (" (1 stronger form refused)" if got.fallbacks else "")
    finally:
        fake.stop()
