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
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from driftgraph.config.indexing import DEFAULT_CACHE_DIR, IndexConfig, ModelPrice, SynonymsConfig, resolve_cache_dir
from driftgraph.config.modes import (
    BasicConfig,
    DriftConfig,
    DriftLocalConfig,
    GlobalConfig,
    LocalConfig,
    PprConfig,
    RerankConfig,
    SourceCaps,
    TraceConfig,
)
from driftgraph.config.section import _Section
from driftgraph.config.services import (
    DEFAULT_JOBS_DIR,
    EmbeddingsConfig,
    ImportConfig,
    LauncherConfig,
    LLMConfig,
    Neo4jConfig,
    PromptsConfig,
    ServeConfig,
    TokenizerConfig,
    VectorIndexConfig,
)
from driftgraph.errors import ConfigError

CONFIG_FILE = "driftgraph.yaml"

__all__ = [
    "BasicConfig",
    "CONFIG_FILE",
    "Config",
    "DriftConfig",
    "DriftLocalConfig",
    "ENV_KEYS",
    "EmbeddingsConfig",
    "GlobalConfig",
    "ImportConfig",
    "IndexConfig",
    "LLMConfig",
    "LauncherConfig",
    "LocalConfig",
    "ModelPrice",
    "Neo4jConfig",
    "PprConfig",
    "PromptsConfig",
    "RerankConfig",
    "ServeConfig",
    "SourceCaps",
    "SynonymsConfig",
    "TokenizerConfig",
    "TraceConfig",
    "VectorIndexConfig",
    "leaf_paths",
    "load_config",
    "parse_config",
]


class Config(_Section):
    """Every setting of driftgraph, one section per concern (``driftgraph.yaml``)."""

    neo4j: Neo4jConfig = Field(Neo4jConfig(), description="the Neo4j server and the local launcher")
    llm: LLMConfig = Field(LLMConfig(), description="the chat model endpoint")
    embeddings: EmbeddingsConfig = Field(EmbeddingsConfig(), description="the embedding model")
    tokenizer: TokenizerConfig = Field(TokenizerConfig(), description="token counting")
    prompts: PromptsConfig = Field(PromptsConfig(), description="edited prompt files")
    index: IndexConfig = Field(IndexConfig(), description="driftgraph index: building a graph from documents")
    synonyms: SynonymsConfig = Field(SynonymsConfig(), description="synonym edges between look-alike entity names")
    local: LocalConfig = Field(LocalConfig(), description="local search")
    trace: TraceConfig = Field(TraceConfig(), description="the retrieval trace stored in Neo4j")
    global_: GlobalConfig = Field(GlobalConfig(), alias="global", description="global search over community reports")
    basic: BasicConfig = Field(BasicConfig(), description="basic search: vector top chunks")
    drift: DriftConfig = Field(DriftConfig(), description="DRIFT search")
    import_: ImportConfig = Field(ImportConfig(), alias="import", description="driftgraph import-graphrag")
    serve: ServeConfig = Field(ServeConfig(), description="the HTTP API, OpenAI-compatible endpoint and MCP server")

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


def load_config(
    path: str | Path | None = None, env: dict[str, str] | None = None, *, launcher_password: bool = True
) -> Config:
    """Load ``driftgraph.yaml`` (explicit path, else ./driftgraph.yaml if present) plus the environment; with no
    password there and the URI the launcher's, the password its first start stored (``launcher_password``)."""
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
        index = data.get("index")
        if index is None:
            index = data["index"] = {}
        if isinstance(index, dict) and isinstance(index.get("cache_dir", DEFAULT_CACHE_DIR), str):
            index["cache_dir"] = resolve_cache_dir(index.get("cache_dir", DEFAULT_CACHE_DIR), base)
        serve = data.get("serve")
        if serve is None:
            serve = data["serve"] = {}
        if isinstance(serve, dict) and isinstance(serve.get("jobs_dir", DEFAULT_JOBS_DIR), str):
            serve["jobs_dir"] = resolve_cache_dir(serve.get("jobs_dir", DEFAULT_JOBS_DIR), base)
    for var, (section, key) in ENV_KEYS.items():
        if env.get(var):
            sec = data.setdefault(section, {})
            if not isinstance(sec, dict):
                raise ConfigError(f"{source}: section '{section}' must be a mapping")
            sec[key] = env[var]
    cfg = parse_config(data, source)
    if launcher_password and not cfg.neo4j.password:
        from driftgraph.launcher_password import for_uri

        own = cfg.neo4j.launcher
        cfg.neo4j.password = for_uri(cfg.neo4j.uri, own.port, own.data_dir) or ""
    return cfg


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
