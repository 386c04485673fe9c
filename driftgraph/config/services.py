"""Sections for what driftgraph talks to: the launcher, Neo4j, the LLM and embedder endpoints, prompts,
the GraphRAG importer and the server."""

from __future__ import annotations

import difflib
from typing import Literal

from pydantic import Field, model_validator

from driftgraph.config.secrets import secret_field
from driftgraph.config.section import _Section


class LauncherConfig(_Section):
    """The embedded Neo4j started by ``driftgraph neo4j start`` (jvm/launcher)."""

    port: int = Field(7687, ge=1, le=65535, description="Bolt port the launcher listens on (127.0.0.1)")
    http_port: int = Field(
        7474, ge=0, le=65535, description="Neo4j Browser + HTTP API on 127.0.0.1; 0 = off; busy = off with a warning"
    )
    data_dir: str = Field(
        ".driftgraph/neo4j", description="the database, pid file and launcher.log (relative to the current directory)"
    )
    heap: str = Field("1g", pattern=r"^\d+[kmgKMG]$", description="JVM maximum heap (-Xmx), e.g. 1g or 512m")
    page_cache: str = Field("256m", pattern=r"^\d+[kmgKMG]$", description="Neo4j page cache size, e.g. 256m or 2g")
    start_timeout_s: float = Field(180.0, gt=0, description="seconds to wait for Neo4j to be ready before giving up")
    java: str = Field(
        "",
        description="java binary to run Neo4j on; empty: $JAVA_HOME/bin/java, else java on PATH. "
        "On Java 21 Lucene computes vector distances with SIMD (faster HNSW inserts)",
    )


class VectorIndexConfig(_Section):
    """HNSW settings of the vector indexes, applied when an index is created (``import-graphrag --reset``).

    Higher values find more of the exact nearest neighbours and cost more per inserted vector; the vector
    writes of a large import are mostly these inserts (docs/guides/graphrag.md has
    the build time and recall of each setting, from ``python -m bench hnsw``)."""

    m: int = Field(16, ge=2, le=512, description="HNSW neighbours per node (Neo4j's default 16)")
    ef_construction: int = Field(100, ge=1, le=3200, description="HNSW candidates per insert (Neo4j's default 100)")


class Neo4jConfig(_Section):
    """The Neo4j server driftgraph reads and writes (``NEO4J_URI``, ``NEO4J_USERNAME``, ``NEO4J_PASSWORD``,
    ``NEO4J_DATABASE`` override these)."""

    uri: str = Field("bolt://127.0.0.1:7687", description="Bolt or neo4j:// URI of the server (env NEO4J_URI)")
    username: str = Field("neo4j", description="user to log in as (env NEO4J_USERNAME)")
    password: str = secret_field(
        "",
        description="password to log in with; also set on the launcher's Neo4j (env NEO4J_PASSWORD). Unset: the "
        "launcher's own, generated at its first start and kept in neo4j.launcher.data_dir/neo4j-password",
    )
    database: str = Field("neo4j", description="database that holds the graph (env NEO4J_DATABASE)")
    launcher: LauncherConfig = Field(LauncherConfig(), description="the local Neo4j of `driftgraph neo4j start`")
    vector_index: VectorIndexConfig = Field(VectorIndexConfig(), description="HNSW settings of new vector indexes")
    index_wait_s: float = Field(300.0, gt=0, description="import/index wait at most this long for indexes ONLINE")
    write_retries: int = Field(
        5, ge=0, le=50, description="a write lost to a transient error (deadlock) runs again this often, whole"
    )
    write_backoff_s: float = Field(0.05, ge=0, le=10, description="wait before the first retry; doubles each time")
    query_timeout_s: float = Field(
        30.0,
        gt=0,
        description="one statement of a question (a read, a trace write) may run this long: the server ends its "
        "transaction, and driftgraph stops waiting for a server that stopped answering",
    )


class LLMConfig(_Section):
    """Chat model behind any OpenAI-compatible endpoint (``OPENAI_BASE_URL``/``OPENAI_API_KEY``)."""

    api_type: Literal["openai", "azure"] = Field(
        "openai", description="openai: OpenAI or a compatible server; azure: Azure OpenAI (base_url = its endpoint)"
    )
    model: str = Field("gpt-4o-mini", description="chat model name sent with every call (Azure: the deployment)")
    base_url: str | None = Field(
        None, description="endpoint root, e.g. http://localhost:8000/v1; unset: api.openai.com (env OPENAI_BASE_URL)"
    )
    api_key: str | None = secret_field(
        None, description="API key; a keyless local server needs base_url only (env OPENAI_API_KEY)"
    )
    azure_api_version: str = Field("2024-10-21", description="api_type azure: the Azure OpenAI API version")
    temperature: float = Field(0.0, ge=0, le=2, description="sampling temperature of chat calls (0: most repeatable)")
    timeout_s: float = Field(120.0, gt=0, description="seconds one chat or embedding request may take")
    max_retries: int = Field(
        5, ge=0, le=20, description="retries of a call after a 429, 5xx, timeout or dropped connection"
    )
    backoff_base_s: float = Field(
        1.0, ge=0, description="a retry waits a random time up to this, doubling each attempt (a Retry-After wins)"
    )
    json_schema: bool = Field(
        True, description="calls that want JSON send response_format json_schema; false: send no response_format"
    )
    model_context_window: int = Field(128_000, ge=1024, description="tokens the chat model accepts (prompt+answer)")


class EmbeddingsConfig(_Section):
    """``local``: all-MiniLM-L6-v2 int8 ONNX, offline; ``openai``: any OpenAI-compatible endpoint."""

    provider: Literal["local", "openai"] = Field(
        "local", description="local: bundled MiniLM on the CPU, offline; openai: an OpenAI-compatible /embeddings"
    )
    model: str = Field("text-embedding-3-small", description="provider=openai: the embedding model name sent")
    base_url: str | None = Field(None, description="provider=openai: its own endpoint (default: llm.base_url)")
    dimensions: int = Field(1536, ge=1, description="only read for provider=openai; local is 384")
    batch_size: int = Field(32, ge=1, le=2048, description="texts embedded per model run or request")
    max_tokens: int = Field(256, ge=8, le=512, description="local model truncation")
    threads: int = Field(0, ge=0, le=64, description="onnxruntime intra-op threads; 0 = runtime default")


class TokenizerConfig(_Section):
    """How tokens are counted for chunking, every budget and every estimate (tiktoken)."""

    encoding: str = Field(
        "cl100k_base", description="tiktoken encoding that counts tokens (chunk sizes, budgets, estimates)"
    )


class PromptsConfig(_Section):
    """Prompts are files; ``dir`` (if set) holds edited copies that win over the packaged ones."""

    dir: str | None = Field(
        None,
        description="folder of edited NAME.txt prompts that win over the packaged ones (relative to driftgraph.yaml)",
    )
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


class ImportConfig(_Section):
    """``driftgraph import-graphrag DIR``: how GraphRAG parquet tables are streamed into Neo4j."""

    batch_size: int = Field(1000, ge=1, le=100_000, description="rows per UNWIND write (one transaction each)")
    embed: bool = Field(True, description="embed entities, chunks and reports after writing (--no-embed)")
    embed_batch_size: int = Field(256, ge=1, le=100_000, description="texts per embed call and vector write")
    vector_batch_size: int = Field(
        500, ge=1, le=100_000, description="precomputed vectors per write tx (smaller tx: cheaper HNSW updates)"
    )
    writers: int = Field(2, ge=1, le=64, description="parallel writer sessions for disjoint batches (vectors)")


DEFAULT_JOBS_DIR = ".driftgraph/jobs"


class ServeConfig(_Section):
    """``driftgraph serve`` / ``driftgraph mcp``: the HTTP API, the OpenAI-compatible endpoint, the MCP server.

    Without ``DRIFTGRAPH_API_KEY`` the server binds loopback only; the key is read from the environment, never
    from this file, so it is not written by ``init`` nor printed by ``config show``."""

    host: str = Field("127.0.0.1", description="bind address; anything but loopback needs DRIFTGRAPH_API_KEY")
    port: int = Field(8765, ge=0, le=65535, description="0 picks a free port (printed at start)")
    max_concurrency: int = Field(8, ge=1, le=1024, description="questions answered at once; more get 429")
    retry_after_s: int = Field(1, ge=1, le=3600, description="the Retry-After a 429 carries")
    max_body_bytes: int = Field(1_000_000, ge=1024, description="larger request bodies get 413")
    body_timeout_s: float = Field(30.0, gt=0, description="a request body not in full within this gets 408")
    header_timeout_s: float = Field(
        30.0, gt=0, description="a connection whose request headers are not in within this is closed"
    )
    request_timeout_s: float = Field(
        300.0, gt=0, description="a question running longer answers 504 and stops (stored with stop_reason deadline)"
    )
    shutdown_grace_s: float = Field(
        60.0, ge=0, description="SIGTERM waits this long in total for in-flight questions, then cancels them"
    )
    max_page_concurrency: int = Field(
        4, ge=1, le=256, description="retrieval reads and pages served at once; more wait briefly, then get 429"
    )
    max_list: int = Field(200, ge=1, le=10_000, description="most retrievals GET /v1/retrievals returns")
    cors_origins: list[str] = Field(default_factory=list, description="origins allowed by CORS; empty = CORS off")
    allowed_hosts: list[str] = Field(
        default_factory=list,
        description="Host header names served besides 127.0.0.1, localhost and [::1] (any port); others get 421. "
        "Add the names clients use when binding elsewhere; '*' accepts any",
    )
    metrics: bool = Field(
        True, description="GET /metrics in Prometheus text format (behind the API key when one is set)"
    )
    trace_retention_days: float = Field(
        0, ge=0, description="serve deletes stored retrievals older than this many days; 0 keeps them all"
    )
    trace_prune_interval_s: float = Field(
        3600, gt=0, description="how often serve prunes (with trace_retention_days set), first at start"
    )
    max_upload_bytes: int = Field(
        50_000_000, ge=1024, description="larger bodies on /v1/documents (an upload, or JSON text) get 413"
    )
    jobs_dir: str = Field(
        DEFAULT_JOBS_DIR,
        description="where document jobs and their uploads wait, so a restarted server resumes them (relative: to "
        "the config file's folder)",
    )
    jobs_keep_days: float = Field(
        30.0, ge=0, description="finished jobs older than this are deleted from jobs_dir (0: kept for ever)"
    )
