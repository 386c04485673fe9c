"""The one place where every default of driftgraph lives.

Everything else takes a ``Config`` (or one of its sections) and reads from it; no function carries a
second default. Loading is strict: an unknown key or an out-of-range value fails with the key's path.
Environment variables (``NEO4J_*``, ``OPENAI_*``) override the file, the way users of Neo4j and OpenAI
tools expect.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from driftgraph.errors import ConfigError

CONFIG_FILE = "driftgraph.yaml"


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class LauncherConfig(_Section):
    """The embedded Neo4j started by ``driftgraph neo4j start`` (jvm/launcher)."""

    port: int = Field(7687, ge=1, le=65535)
    http_port: int = Field(
        7474, ge=0, le=65535, description="Neo4j Browser + HTTP API on 127.0.0.1; 0 = off; busy = off with a warning"
    )
    data_dir: str = ".driftgraph/neo4j"
    heap: str = Field("1g", pattern=r"^\d+[kmgKMG]$")
    page_cache: str = Field("256m", pattern=r"^\d+[kmgKMG]$")
    start_timeout_s: float = Field(180.0, gt=0)


class Neo4jConfig(_Section):
    uri: str = "bolt://127.0.0.1:7687"
    username: str = "neo4j"
    password: str = "driftgraph"
    database: str = "neo4j"
    launcher: LauncherConfig = LauncherConfig()
    index_wait_s: float = Field(300.0, gt=0, description="import/index wait at most this long for indexes ONLINE")


class LLMConfig(_Section):
    """Chat model behind any OpenAI-compatible endpoint (``OPENAI_BASE_URL``/``OPENAI_API_KEY``)."""

    api_type: Literal["openai", "azure"] = "openai"
    model: str = "gpt-4o-mini"
    base_url: str | None = None
    api_key: str | None = None
    azure_api_version: str = "2024-10-21"
    temperature: float = Field(0.0, ge=0, le=2)
    timeout_s: float = Field(120.0, gt=0)
    max_retries: int = Field(5, ge=0, le=20)
    backoff_base_s: float = Field(1.0, ge=0)
    json_schema: bool = True
    model_context_window: int = Field(128_000, ge=1024, description="tokens the chat model accepts (prompt+answer)")


class EmbeddingsConfig(_Section):
    """``local``: all-MiniLM-L6-v2 int8 ONNX, offline; ``openai``: any OpenAI-compatible endpoint."""

    provider: Literal["local", "openai"] = "local"
    model: str = "text-embedding-3-small"
    dimensions: int = Field(1536, ge=1, description="only read for provider=openai; local is 384")
    batch_size: int = Field(32, ge=1, le=2048)
    max_tokens: int = Field(256, ge=8, le=512, description="local model truncation")
    threads: int = Field(0, ge=0, le=64, description="onnxruntime intra-op threads; 0 = runtime default")


class TokenizerConfig(_Section):
    encoding: str = "cl100k_base"


class PromptsConfig(_Section):
    """Prompts are files; ``dir`` (if set) holds edited copies that win over the packaged ones."""

    dir: str | None = None
    overrides: dict[str, str] = Field(default_factory=dict, description="prompt name -> file; names as in prompts/")

    @model_validator(mode="after")
    def _known_prompt_names(self) -> PromptsConfig:
        """An override for a prompt that does not exist would be silently ignored: name the valid ones."""
        from driftgraph.resources import data_dir

        known = sorted(p.stem for p in data_dir("prompts").glob("*.txt"))
        for name in self.overrides:
            if name not in known:
                close = difflib.get_close_matches(name, known, n=1)
                hint = f" (did you mean '{close[0]}'?)" if close else f"; prompts are: {', '.join(known)}"
                raise ValueError(f"prompts.overrides: no prompt named '{name}'{hint}")
        return self


class ModelPrice(_Section):
    """USD per million tokens of one chat model (``index --estimate``)."""

    prompt: float = Field(ge=0)
    completion: float = Field(ge=0)


def _default_prices() -> dict[str, ModelPrice]:
    """List prices (USD / 1M tokens, standard tier) of common models; add yours under ``index.prices``."""
    table = {
        "gpt-4o-mini": (0.15, 0.60),
        "gpt-4o": (2.50, 10.00),
        "gpt-4.1": (2.00, 8.00),
        "gpt-4.1-mini": (0.40, 1.60),
        "gpt-4.1-nano": (0.10, 0.40),
    }
    return {name: ModelPrice(prompt=p, completion=c) for name, (p, c) in table.items()}


class IndexConfig(_Section):
    """``driftgraph index DIR``: loading, chunking, extraction, summaries, communities, reports, cache."""

    extensions: list[str] = Field(default_factory=lambda: ["txt", "md", "csv", "json", "jsonl"])
    csv_text_column: str = "text"
    json_text_field: str = "text"
    max_file_bytes: int = Field(10_000_000, ge=1, description="larger files are skipped with a warning")
    chunk_size: int = Field(1200, ge=16, le=100_000, description="tokens per chunk")
    chunk_overlap: int = Field(100, ge=0, description="tokens shared by neighbouring chunks")
    entity_types: list[str] = Field(default_factory=lambda: ["organization", "person", "geo", "event"])
    max_gleanings: int = Field(1, ge=0, le=10, description="extra 'anything missed?' rounds per chunk")
    extract_max_tokens: int = Field(4000, ge=64)
    claims: bool = False
    claim_description: str = "Any claims or facts that could be relevant to information discovery."
    description_max_tokens: int = Field(500, ge=16, description="merged descriptions above this are summarised")
    summarize_input_max_tokens: int = Field(4000, ge=64)
    max_cluster_size: int = Field(10, ge=2)
    seed: int = Field(0xDEADBEEF, ge=0, description="Leiden seed: same graph + seed = same communities")
    report_max_input_tokens: int = Field(8000, ge=256)
    report_max_tokens: int = Field(2000, ge=64)
    concurrency: int = Field(4, ge=1, le=256, description="parallel LLM calls")
    write_batch_size: int = Field(1000, ge=1, le=100_000)
    cache_dir: str = Field(".driftgraph/cache", description="LLM and embedding call cache (relative to cwd)")
    prices: dict[str, ModelPrice] = Field(default_factory=_default_prices, description="USD per 1M tokens by model")
    estimate_entities_per_chunk: float = Field(12.0, gt=0, description="--estimate before extraction is cached")
    estimate_relationships_per_chunk: float = Field(10.0, ge=0, description="--estimate before extraction")
    estimate_summarized_share: float = Field(0.1, ge=0, le=1, description="share of descriptions summarised")
    batch_completion_window: str = Field("24h", description="--batch: the Batch API's completion_window")
    batch_poll_initial_s: float = Field(2.0, gt=0, description="--batch: first wait between polls (doubles)")
    batch_poll_max_s: float = Field(60.0, gt=0, description="--batch: longest wait between polls")
    batch_timeout_s: float = Field(86_400.0, gt=0, description="--batch: give up polling (a re-run resumes)")
    batch_price_factor: float = Field(0.5, ge=0, description="--batch --estimate: Batch API price / direct price")

    @model_validator(mode="after")
    def _overlap_below_size(self) -> IndexConfig:
        if self.chunk_overlap >= self.chunk_size:
            raise ValueError("chunk_overlap must be smaller than chunk_size")
        return self


class RerankConfig(_Section):
    """Optional reranking of local search's chunk candidates (query/local/rerank.py).

    ``endpoint`` posts ``{model, query, documents, top_n}`` to ``{base_url}/rerank`` (Cohere, Jina, vLLM, TEI
    answer ``{results: [{index, relevance_score}]}``); ``llm`` ranks listwise with the chat model.
    """

    provider: Literal["none", "endpoint", "llm"] = "none"
    base_url: str | None = Field(None, description="endpoint: the server root; /rerank is appended")
    model: str = Field("rerank", description="endpoint: the model name sent")
    api_key: str | None = Field(None, description="endpoint: sent as a Bearer token when set")
    timeout_s: float = Field(30.0, gt=0, description="endpoint: request timeout")
    top_n: int = Field(30, ge=1, le=1000, description="best chunk candidates reranked; the rest keep their order")
    doc_tokens: int = Field(300, ge=16, description="tokens of each chunk sent to the reranker")
    max_llm_calls: int = Field(1, ge=1, le=20, description="llm: listwise calls per question (top_n split)")


class LocalConfig(_Section):
    """Local search (README "Local search"): entry thresholds, expansion limits, routing, budget. Every key is read."""

    # budget: context = min(window - answer_reserve - prompt - question - history, context_cap)
    context_cap: int = Field(8000, ge=256, description="cost ceiling on context tokens (README: why 8000)")
    answer_reserve: int = Field(1500, ge=16, description="tokens kept free for the answer (max_tokens of the call)")
    history_turns: int = Field(5, ge=0, le=100, description="most recent history messages considered")
    history_budget: int = Field(1000, ge=0, description="tokens the history may take (rewrite and answer prompt)")
    # entry points
    entity_top_k: int = Field(10, ge=1, le=200, description="entry entities kept at most")
    entity_oversample: float = Field(3.0, ge=1.0, le=20.0, description="vector k = entity_top_k * oversample")
    hybrid: bool = Field(True, description="fuse entity fulltext hits with the vector hits (RRF)")
    fulltext_k: int = Field(20, ge=1, le=500, description="entity fulltext hits fused")
    rrf_k: int = Field(60, ge=1, description="reciprocal rank fusion constant")
    min_similarity: float = Field(0.42, ge=-1, le=1, description="absolute cosine threshold for entry entities")
    relative_similarity: float = Field(0.8, ge=0, le=1, description="keep entities with cosine >= best * this")
    named_rare_chunks: int = Field(
        5,
        ge=0,
        description="a one-word, lower-case name the question spells out bypasses the thresholds only "
        "when at most this many chunks mention it",
    )
    chunk_top_k: int = Field(60, ge=0, le=1000, description="chunk vector hits taken as entry candidates")
    chunk_min_similarity: float = Field(0.15, ge=-1, le=1, description="chunks below this without graph support drop")
    report_top_k: int = Field(5, ge=0, le=1000, description="community report vector hits taken as candidates")
    # second hop: chunks sharing rare entities with the best chunk hits or mentioning entry entities
    seed_chunks: int = Field(4, ge=0, le=50, description="top chunk hits whose rare entities seed the second hop")
    seed_hop_weight: float = Field(0.5, ge=0, description="weight of shared-rare-entity support from seed chunks")
    entity_hop_weight: float = Field(0.2, ge=0, description="weight of support from entry entities a chunk names")
    hop_max_chunks_per_entity: int = Field(25, ge=2, description="entities in more chunks are too common to hop")
    entity_chunks: int = Field(25, ge=0, description="chunks fetched per entry entity (most query-similar first)")
    # multi-hop bridge (query/local/multihop.py): the best chunks not yet hopped from seed the next hop
    max_hops: int = Field(3, ge=2, le=6, description="hop limit; each hop past 2 is one more Bolt round trip")
    bridge_frontier: int = Field(6, ge=0, le=50, description="best unexpanded chunks whose entities seed a hop")
    bridge_chunks_per_entity: int = Field(3, ge=1, le=100, description="chunks per frontier entity (most similar)")
    bridge_weight: float = Field(0.2, ge=0, description="weight of support from a frontier chunk (x its score)")
    bridge_max_df: int = Field(
        25, ge=2, description="entities in more chunks are not bridged through (only the most similar chunks are)"
    )
    # expansion
    relationships_per_entity: int = Field(10, ge=0, le=1000, description="in-network first, then by weight")
    max_community_level: int = Field(2, ge=0, le=20, description="reports of communities up to this level")
    # routing and floors
    route: Literal["auto", "fact", "relational", "thematic"] = "auto"
    llm_router: bool = Field(False, description="ask the LLM (prompts/route_question.txt) when the rule is unsure")
    chunk_floor: int = Field(3, ge=0, description="evidence floor: at least this many chunks when any exist")
    entity_floor: int = Field(3, ge=0, description="fact route: entities always given room")
    relationship_floor: int = Field(5, ge=0, description="relational route: relationships always given room")
    report_floor: int = Field(2, ge=0, description="thematic route: reports always given room")
    rerank: RerankConfig = RerankConfig()


class TraceConfig(_Section):
    """The retrieval trace written to Neo4j as (:Retrieval)-[:INCLUDED|DROPPED]->(x)."""

    enabled: bool = True
    max_dropped: int = Field(500, ge=0, description="DROPPED edges written per retrieval (JSON keeps all)")


class GlobalConfig(_Section):
    """Global search: map over community reports in token-bounded batches, reduce the best key points.

    Budgets follow README "Local search": a map call gets ``min(window - map_max_tokens - prompt - question, map_cap)``
    report tokens, the reduce call ``min(window - answer_reserve - prompt - question, reduce_cap)`` point tokens.
    """

    level: int = Field(2, ge=0, le=20, description="finest level used: that level plus shallower leaf communities")
    dynamic: bool = Field(False, description="start at the roots, descend only into reports rated relevant")
    seed: int = Field(0, ge=0, description="seeds the report order before batching")
    concurrency: int = Field(4, ge=1, le=64, description="parallel map / rating calls")
    map_cap: int = Field(8000, ge=256, description="cost ceiling on report tokens per map call")
    map_max_tokens: int = Field(1000, ge=16, description="output cap of one map call")
    max_points: int = Field(5, ge=1, le=50, description="key points asked of each map call")
    min_score: int = Field(1, ge=1, le=100, description="points scoring below this (0 always) are dropped")
    reduce_cap: int = Field(8000, ge=256, description="cost ceiling on point tokens in the reduce prompt")
    answer_reserve: int = Field(1500, ge=16, description="output cap of the reduce call (the answer)")
    response_type: str = "multiple paragraphs"
    max_rating: int = Field(5, ge=1, le=100, description="dynamic: ratings run 0..max_rating")
    rate_threshold: int = Field(2, ge=0, le=100, description="dynamic: reports rated below this are pruned")
    rate_batch_size: int = Field(16, ge=1, le=100, description="dynamic: report summaries rated per call")
    rate_text_tokens: int = Field(200, ge=16, description="dynamic: summary tokens shown per report when rating")
    repair_retries: int = Field(1, ge=0, le=3, description="repair calls for a malformed JSON reply")
    max_llm_calls: int = Field(500, ge=1, description="chat calls per question (rating, map, reduce); never exceeded")
    max_prompt_tokens: int = Field(
        2_000_000, ge=1000, description="prompt tokens per question; never exceeded (reserved before each call)"
    )


class BasicConfig(_Section):
    """Basic search, the baseline: vector top chunks (optionally fused with fulltext) until the budget is full."""

    top_k: int = Field(50, ge=1, le=10_000, description="chunk hits fetched first (doubled while budget remains)")
    hybrid: bool = Field(False, description="fuse chunk_fulltext hits with the vector hits (RRF)")
    fulltext_k: int = Field(50, ge=1, le=10_000)
    rrf_k: int = Field(60, ge=1, description="reciprocal rank fusion constant")
    context_cap: int = Field(8000, ge=256, description="cost ceiling on context tokens")
    answer_reserve: int = Field(1500, ge=16, description="output cap of the answer call")
    response_type: str = "multiple paragraphs"


class DriftLocalConfig(LocalConfig):
    """DRIFT's own local-search settings for its steps: the keys of ``local``, a smaller context per step."""

    context_cap: int = Field(4000, ge=256, description="cost ceiling on context tokens of one DRIFT step")
    answer_reserve: int = Field(800, ge=16, description="output cap of one DRIFT step (its JSON answer)")


class DriftConfig(_Section):
    """DRIFT search (README "DRIFT search"). Worst case with these defaults: 1 HyDE + 3 primer folds + 3 epochs
    x 8 steps + 1 reduce = 29 chat calls (+ repairs), hard-capped by ``max_llm_calls`` = 32; GraphRAG 3.2.0 makes 67."""

    seed: int = Field(0, ge=0, description="seeds the HyDE template choice and queue tie-breaks")
    hyde: bool = Field(True, description="expand the question into a hypothetical report before the primer")
    hyde_max_tokens: int = Field(400, ge=16, description="output cap of the HyDE call")
    primer_reports_k: int = Field(12, ge=1, le=500, description="community reports the primer reads")
    primer_folds: int = Field(3, ge=1, le=50, description="primer calls the reports are split into")
    primer_fold_tokens: int = Field(6000, ge=256, description="report tokens per primer call")
    primer_max_tokens: int = Field(800, ge=64, description="output cap of one primer call")
    follow_ups_per_epoch: int = Field(8, ge=1, le=200, description="local-search steps run per epoch")
    max_follow_ups_per_answer: int = Field(3, ge=0, le=50, description="follow-ups kept from one answer")
    max_depth: int = Field(3, ge=0, le=20, description="epochs after the primer (0 = primer only)")
    max_llm_calls: int = Field(32, ge=1, le=100_000, description="chat calls per question, never exceeded")
    max_prompt_tokens: int = Field(200_000, ge=1000, description="prompt tokens per question, never exceeded")
    sufficient_score: float = Field(90, ge=0, le=100, description="stop once an answer scores at least this")
    min_score_gain: float = Field(5, ge=0, le=100, description="stop when an epoch raises the best score less")
    dedup_similarity: float = Field(0.9, ge=0, le=1, description="follow-ups closer than this cosine are dropped")
    novelty_weight: float = Field(0.3, ge=0, le=1, description="queue priority = parent score and this x novelty")
    concurrency: int = Field(4, ge=1, le=64, description="parallel chat calls within an epoch")
    reduce: bool = Field(True, description="write one final answer; off = return the step tree")
    reduce_max_tokens: int = Field(1500, ge=64, description="output cap of the reduce call")
    reduce_context_tokens: int = Field(8000, ge=256, description="step answers the reduce reads (held back)")
    response_type: str = "multiple paragraphs"
    local: DriftLocalConfig = DriftLocalConfig()

    @model_validator(mode="after")
    def _router_off(self) -> DriftConfig:
        if self.local.llm_router:
            raise ValueError("drift.local.llm_router must be false: router calls would escape DRIFT's call budget")
        return self


class ImportConfig(_Section):
    """``driftgraph import-graphrag DIR``: how GraphRAG parquet tables are streamed into Neo4j."""

    batch_size: int = Field(1000, ge=1, le=100_000, description="rows per UNWIND write (one transaction each)")
    embed: bool = Field(True, description="embed entities, chunks and reports after writing (--no-embed)")
    embed_batch_size: int = Field(256, ge=1, le=100_000, description="texts per embed call and vector write")
    vector_batch_size: int = Field(
        500, ge=1, le=100_000, description="precomputed vectors per write tx (smaller tx: cheaper HNSW updates)"
    )
    writers: int = Field(2, ge=1, le=64, description="parallel writer sessions for disjoint batches (vectors)")


class ServeConfig(_Section):
    """``driftgraph serve`` / ``driftgraph mcp``: the HTTP API, the OpenAI-compatible endpoint, the MCP server.

    Without ``DRIFTGRAPH_API_KEY`` the server binds loopback only; the key is read from the environment, never
    from this file, so it is not written by ``init`` nor printed by ``config show``."""

    host: str = Field("127.0.0.1", description="bind address; anything but loopback needs DRIFTGRAPH_API_KEY")
    port: int = Field(8765, ge=0, le=65535, description="0 picks a free port (printed at start)")
    max_concurrency: int = Field(8, ge=1, le=1024, description="questions answered at once; more get 429")
    retry_after_s: int = Field(1, ge=1, le=3600, description="the Retry-After a 429 carries")
    max_body_bytes: int = Field(1_000_000, ge=1024, description="larger request bodies get 413")
    request_timeout_s: float = Field(300.0, gt=0, description="a question running longer answers 504")
    shutdown_grace_s: float = Field(60.0, ge=0, description="SIGTERM waits this long for in-flight questions")
    max_list: int = Field(200, ge=1, le=10_000, description="most retrievals GET /v1/retrievals returns")
    cors_origins: list[str] = Field(default_factory=list, description="origins allowed by CORS; empty = CORS off")


class Config(_Section):
    neo4j: Neo4jConfig = Neo4jConfig()
    llm: LLMConfig = LLMConfig()
    embeddings: EmbeddingsConfig = EmbeddingsConfig()
    tokenizer: TokenizerConfig = TokenizerConfig()
    prompts: PromptsConfig = PromptsConfig()
    index: IndexConfig = IndexConfig()
    local: LocalConfig = LocalConfig()
    trace: TraceConfig = TraceConfig()
    global_: GlobalConfig = Field(GlobalConfig(), alias="global")
    basic: BasicConfig = BasicConfig()
    drift: DriftConfig = DriftConfig()
    import_: ImportConfig = Field(ImportConfig(), alias="import")
    serve: ServeConfig = ServeConfig()

    model_config = ConfigDict(extra="forbid", validate_assignment=True, populate_by_name=True)

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(by_alias=True, mode="json")


# Environment variables that override the file: the names Neo4j and OpenAI users already set.
ENV_KEYS: dict[str, tuple[str, str]] = {
    "NEO4J_URI": ("neo4j", "uri"),
    "NEO4J_USERNAME": ("neo4j", "username"),
    "NEO4J_PASSWORD": ("neo4j", "password"),
    "NEO4J_DATABASE": ("neo4j", "database"),
    "OPENAI_API_KEY": ("llm", "api_key"),
    "OPENAI_BASE_URL": ("llm", "base_url"),
}


def _format_error(err: ValidationError, source: str) -> str:
    lines = []
    for e in err.errors():
        path = ".".join(str(p) for p in e["loc"])
        if e["type"] == "extra_forbidden":
            parent = e["loc"][:-1]
            allowed = sorted(_allowed_keys(parent))
            near = difflib.get_close_matches(str(e["loc"][-1]), allowed, n=1, cutoff=0.6)
            hint = f": did you mean '{near[0]}'?" if near else ""
            lines.append(f"{source}: unknown key '{path}'{hint} (allowed here: {', '.join(allowed)})")
        else:
            lines.append(f"{source}: bad value for '{path}': {e['msg']}")
    return "\n".join(lines)


def _allowed_keys(parent: tuple[Any, ...]) -> list[str]:
    model: type[BaseModel] = Config
    for part in parent:
        field = _field_by_name(model, str(part))
        if field is None:
            return []
        ann = field.annotation
        if not (isinstance(ann, type) and issubclass(ann, BaseModel)):
            return []
        model = ann
    return [f.alias or name for name, f in model.model_fields.items()]


def _field_by_name(model: type[BaseModel], name: str) -> Any:
    for key, f in model.model_fields.items():
        if name in (key, f.alias):
            return f
    return None


def parse_config(data: dict[str, Any], source: str = "config") -> Config:
    """Validate a nested mapping, naming the offending key on failure."""
    try:
        return Config.model_validate(data)
    except ValidationError as err:
        raise ConfigError(_format_error(err, source)) from None


def load_config(path: str | Path | None = None, env: dict[str, str] | None = None) -> Config:
    """Load ``driftgraph.yaml`` (explicit path, else ./driftgraph.yaml if present) plus the environment."""
    import yaml

    env = dict(os.environ) if env is None else env
    data: dict[str, Any] = {}
    source = "defaults"
    candidate = Path(path) if path is not None else Path(CONFIG_FILE)
    if path is not None and not candidate.is_file():
        raise ConfigError(f"config file not found: {candidate}")
    if candidate.is_file():
        source = str(candidate)
        try:
            loaded = yaml.safe_load(candidate.read_text(encoding="utf-8"))
        except yaml.YAMLError as err:
            raise ConfigError(f"{source}: not valid YAML: {err}") from None
        if loaded is None:
            loaded = {}
        if not isinstance(loaded, dict):
            raise ConfigError(f"{source}: the top level must be a mapping of sections")
        data = loaded
        base = candidate.resolve().parent
        prompts = data.get("prompts")
        if isinstance(prompts, dict) and isinstance(prompts.get("dir"), str):
            prompts["dir"] = str((base / prompts["dir"]).resolve())
    for var, (section, key) in ENV_KEYS.items():
        if env.get(var):
            sec = data.setdefault(section, {})
            if not isinstance(sec, dict):
                raise ConfigError(f"{source}: section '{section}' must be a mapping")
            sec[key] = env[var]
    return parse_config(data, source)


def leaf_paths(model: type[BaseModel] = Config, prefix: str = "") -> list[str]:
    """Every leaf key of the model as a dotted path (used by the dead-key test and ``config show``)."""
    out: list[str] = []
    for name, f in model.model_fields.items():
        ann = f.annotation
        if isinstance(ann, type) and issubclass(ann, BaseModel):
            out += leaf_paths(ann, f"{prefix}{name}.")
        else:
            out.append(prefix + name)
    return out
