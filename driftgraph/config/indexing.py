"""The ``index`` section (chunking, extraction, communities, reports, prices for estimates) and ``synonyms``."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, model_validator

from driftgraph.config.section import _Section


class ModelPrice(_Section):
    """USD per million tokens of one chat model (``index --estimate``)."""

    prompt: float = Field(ge=0, description="USD per million prompt (input) tokens")
    completion: float = Field(ge=0, description="USD per million completion (output) tokens")


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


DEFAULT_CACHE_DIR = ".driftgraph/cache"


def resolve_cache_dir(value: str, base: Path) -> str:
    """``index.cache_dir`` as an absolute path: a relative one is taken against ``base`` (the config file's
    folder), so a run started from another working directory finds the same cache."""
    path = Path(value).expanduser()
    return str(path if path.is_absolute() else (base / path).resolve())


class IndexConfig(_Section):
    """``driftgraph index DIR``: loading, chunking, extraction, summaries, communities, reports, cache."""

    extensions: list[str] = Field(
        default_factory=lambda: ["txt", "md", "csv", "json", "jsonl", "pdf", "docx", "pptx", "html", "htm"],
        description="file extensions read from the input folder; other files are ignored (pdf, docx, pptx, html "
        "and htm need the documents extra: pip install 'driftgraph[documents]')",
    )
    csv_text_column: str = Field("text", description="CSV column holding a row's text; other columns become metadata")
    json_text_field: str = Field(
        "text", description="JSON/JSONL field holding a record's text; other scalar fields become metadata"
    )
    max_file_bytes: int = Field(10_000_000, ge=1, description="larger files are skipped with a warning")
    chunk_size: int = Field(1200, ge=16, le=100_000, description="tokens per chunk")
    chunk_overlap: int = Field(100, ge=0, description="tokens shared by neighbouring chunks")
    entity_types: list[str] = Field(
        default_factory=lambda: ["organization", "person", "geo", "event"],
        description="entity types the extraction prompt asks for",
    )
    max_gleanings: int = Field(1, ge=0, le=10, description="extra 'anything missed?' rounds per chunk")
    extract_max_tokens: int = Field(4000, ge=64, description="output cap of one extraction, gleaning or claims call")
    loop_guard: bool = Field(
        False,
        description="stream extraction and report replies and cut one that starts repeating itself (small local "
        "models decoding greedily loop until max_tokens); see the local-models guide",
    )
    claims: bool = Field(False, description="also extract claims (one more LLM call per chunk)")
    claim_description: str = Field(
        "Any claims or facts that could be relevant to information discovery.",
        description="claims: what counts as a claim, as told to the claims prompt",
    )
    description_max_tokens: int = Field(500, ge=16, description="merged descriptions above this are summarised")
    summarize_input_max_tokens: int = Field(
        4000, ge=64, description="descriptions given to one summary call are cut to this many tokens"
    )
    max_cluster_size: int = Field(
        10, ge=2, description="Leiden splits communities of this many entities or more into a level below"
    )
    seed: int = Field(0xDEADBEEF, ge=0, description="Leiden seed: same graph + seed = same communities")
    stable_communities: bool = Field(
        True, description="keep communities the new input does not touch (false: re-cluster all every run)"
    )
    report_max_input_tokens: int = Field(
        8000, ge=256, description="context tokens of one community report call (sub-reports stand in above)"
    )
    report_max_tokens: int = Field(2000, ge=64, description="output cap of one community report call")
    report_min_size: int = Field(
        1,
        ge=1,
        description="communities with fewer entities get no report (one model call saved each; local search still "
        "reads their entities, global search lists them as dropped: no_report); one that already has a report "
        "keeps it, refreshed when its data changes (index --reset drops them)",
    )
    concurrency: int = Field(4, ge=1, le=256, description="parallel LLM calls")
    write_batch_size: int = Field(
        1000, ge=1, le=100_000, description="rows per Neo4j read or write page (graph, communities, vectors)"
    )
    cache_dir: str = Field(
        DEFAULT_CACHE_DIR,
        description="LLM and embedding call cache; a relative path is relative to the folder of driftgraph.yaml "
        "(without a config file: to the current directory, where driftgraph.yaml is looked for)",
    )
    prices: dict[str, ModelPrice] = Field(default_factory=_default_prices, description="USD per 1M tokens by model")
    estimate_entities_per_chunk: float = Field(12.0, gt=0, description="--estimate before extraction is cached")
    estimate_relationships_per_chunk: float = Field(10.0, ge=0, description="--estimate before extraction")
    estimate_summarized_share: float = Field(0.1, ge=0, le=1, description="share of descriptions summarised")
    estimate_record_tokens: int = Field(
        45, ge=1, description="--estimate, expected figures: reply tokens of one extracted entity or relationship"
    )
    estimate_gleaning_share: float = Field(
        0.1, ge=0, le=1, description="--estimate, expected figures: a gleaning reply's size against the first reply"
    )
    estimate_report_tokens: int = Field(
        500, ge=1, description="--estimate, expected figures: reply tokens of one community report"
    )
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


class SynonymsConfig(_Section):
    """Synonym edges (``SYN``, as HippoRAG 2 adds them): entities whose names embed alike, so the bridge can hop
    from "Rutgers" to "Rutgers University". Built by ``import-graphrag`` and ``index`` after the embeddings."""

    enabled: bool = Field(True, description="embed entity names and link look-alikes after import and index")
    min_similarity: float = Field(
        0.85, ge=0, le=1, description="cosine of two name embeddings at or above which they are synonyms"
    )
    max_per_entity: int = Field(5, ge=1, le=100, description="most similar names linked per new entity")
    max_entities: int = Field(
        200_000, ge=0, description="graphs with more entities skip synonym edges with a warning (all-pairs cost)"
    )
    batch_size: int = Field(512, ge=1, le=100_000, description="names compared and linked per write transaction")
