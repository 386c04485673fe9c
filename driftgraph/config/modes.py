"""Sections of the four query modes (local, global, basic, DRIFT) and of the stored trace."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from driftgraph.config.secrets import secret_field
from driftgraph.config.section import _Section


class RerankConfig(_Section):
    """Optional reranking of local search's chunk candidates (query/rerank.py).

    ``endpoint`` posts ``{model, query, documents, top_n}`` to ``{base_url}/rerank`` (Cohere, Jina, vLLM, TEI
    answer ``{results: [{index, relevance_score}]}``); ``llm`` ranks listwise with the chat model.
    """

    provider: Literal["none", "endpoint", "llm"] = Field(
        "none", description="none: no reranking; endpoint: a /rerank server; llm: listwise ranking by the chat model"
    )
    base_url: str | None = Field(None, description="endpoint: the server root; /rerank is appended")
    model: str = Field("rerank", description="endpoint: the model name sent")
    api_key: str | None = secret_field(None, description="endpoint: sent as a Bearer token when set")
    timeout_s: float = Field(30.0, gt=0, description="endpoint: request timeout")
    max_retries: int = Field(
        2, ge=0, le=20, description="endpoint: retries after a 429, 5xx, timeout or refused connection"
    )
    backoff_base_s: float = Field(
        0.5, ge=0, description="endpoint: ceiling of the first retry's random wait, doubling (a Retry-After wins)"
    )
    top_n: int = Field(30, ge=1, le=1000, description="best chunk candidates reranked; the rest keep their order")
    doc_tokens: int = Field(300, ge=16, description="tokens of each chunk sent to the reranker")
    max_llm_calls: int = Field(1, ge=1, le=20, description="llm: listwise calls per question (top_n split)")


class SourceCaps(_Section):
    """Shares of the context budget each source may fill before every later source has had its turn.

    1.0 = no cap. What a cap held back is offered again once every source had its turn, so a cap never
    leaves room unused; it only stops the route's lead source from starving the others (query/budget.py).
    """

    report: float = Field(1.0, gt=0, le=1, description="community reports")
    entity: float = Field(1.0, gt=0, le=1, description="entities")
    relationship: float = Field(1.0, gt=0, le=1, description="relationships")
    chunk: float = Field(1.0, gt=0, le=1, description="source text")
    claim: float = Field(1.0, gt=0, le=1, description="claims")


class PprConfig(_Section):
    """Personalized PageRank ranking of local search's chunks (``local.ranking: ppr``, query/local/ppr.py)."""

    fetch: bool = Field(
        False, description="one more round trip: the candidates' mentions and one hop further (~4x the retrieval time)"
    )
    frontier: int = Field(
        20, ge=0, le=500, description="with fetch: best chunks whose entities' other chunks are fetched"
    )
    chunks_per_entity: int = Field(
        3, ge=1, le=100, description="with fetch: new chunks per frontier entity (most similar)"
    )
    max_df: int = Field(25, ge=2, description="with fetch: entities in more chunks are not fetched through")
    damping: float = Field(
        0.85, gt=0, lt=1, description="probability the walk follows an edge (else restarts): ~1/(1-d) steps a walk"
    )
    passage_weight: float = Field(0.05, ge=0, description="restart weight of a chunk hit (x similarity) vs entities")
    passage_relative_temperature: float = Field(
        0.8,
        ge=0,
        le=100,
        description="the chunk hits' restart mass (passage_weight x their summed similarity) is shared by "
        "softmax(similarity / (this x the hits' similarity spread)), so a clear best hit leads the walk whatever "
        "the embedder's cosine scale; 0: in proportion to similarity",
    )
    known_relations: bool = Field(
        True,
        description="RELATED edges among the entities already found (entry entities, every link's) join the walk; "
        "read in the bridge's round trip, so none when no hop past the second runs (max_hops 2, no frontier)",
    )
    relation_weight: float = Field(
        1.0, ge=0, description="weight of a RELATED edge in the walk (known_relations, fetch); a mention weighs 1"
    )
    weight: float = Field(
        1.0, ge=0, description="score = similarity + support + weight x (mass / best mass) ** mass_exponent"
    )
    mass_exponent: float = Field(
        0.5,
        gt=0,
        le=1,
        description="the walk's mass falls by a factor per chunk-entity-chunk step: its root (< 1) lets a chunk "
        "several hops out count by its order of magnitude; 1: linear",
    )
    iterations: int = Field(
        150, ge=1, le=1000, description="power iterations at most (damping 0.85 converges to 1e-8 in ~115)"
    )
    tolerance: float = Field(1e-8, gt=0, description="stop when the L1 change of the mass is below this")


class ChunkRankWeights(_Section):
    """Weights of the presentation order ``local.chunk_rank: graph`` (query/local/present.py): the included chunks
    are shown by ``similarity + ppr x mass + entities x entity cover + seed x seed support + bridge x bridge
    support``, place by place with ``chain`` (docs/concepts/local-search.md, "Presentation order"); which chunks
    enter is decided before, by the selection score, so only the order changes. The defaults are the 5-fold CV
    choice on the dev split (``python -m bench cv --ranking``)."""

    ppr: float = Field(1.0, ge=0, description="weight of the walk's mass (share of the best chunk's, its root)")
    entities: float = Field(
        0.1, ge=0, description="weight of the entry entities a chunk names, summed (idf / idf_max x entity similarity)"
    )
    seed: float = Field(0.0, ge=0, description="weight of shared-rare-entity support from the seed chunks")
    bridge: float = Field(0.0, ge=0, description="weight of the bridge's support")
    chain: float = Field(
        0.5,
        ge=0,
        description="each next place: bonus x the strongest rare-entity link (idf / idf_max) to a chunk already "
        "shown, so a chain's next link follows the one before",
    )


class LocalConfig(_Section):
    """Local search (docs/concepts/local-search.md): entry thresholds, expansion limits, routing, budget. Every key
    is read."""

    # budget: context = min(window - answer_reserve - prompt - question - history, context_cap)
    context_cap: int = Field(8000, ge=256, description="cost ceiling on context tokens (docs: local search, why 8000)")
    answer_reserve: int = Field(1500, ge=16, description="tokens kept free for the answer (max_tokens of the call)")
    history_turns: int = Field(5, ge=0, le=100, description="most recent history messages considered")
    history_budget: int = Field(1000, ge=0, description="tokens the history may take (rewrite and answer prompt)")
    response_type: str = Field(
        "concise answer in markdown; a few sentences are usually enough",
        description="the answer the prompt asks for: the words after 'Write a' in prompts/local_search.txt",
    )
    # entry points
    entity_top_k: int = Field(10, ge=1, le=200, description="entry entities kept at most")
    entity_oversample: float = Field(3.0, ge=1.0, le=20.0, description="vector k = entity_top_k * oversample")
    hybrid: bool = Field(True, description="fuse entity fulltext hits with the vector hits (RRF)")
    fulltext_k: int = Field(20, ge=1, le=500, description="entity fulltext hits fused")
    rrf_k: int = Field(60, ge=1, description="reciprocal rank fusion constant")
    min_similarity: float | None = Field(
        None,
        ge=-1,
        le=1,
        description="absolute cosine threshold for entry entities; unset: the index's calibrated value (stored at "
        "import, index and adopt; `driftgraph doctor` shows it), else min_similarity_fallback. A value here wins",
    )
    min_similarity_fallback: float = Field(
        0.42,
        ge=-1,
        le=1,
        description="min_similarity for an index that holds no calibrated value (built before calibration, or "
        "imported with --no-embed); tuned on MuSiQue with the offline MiniLM embedder",
    )
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
    entity_seed_chunks: int = Field(
        1, ge=0, le=10, description="best chunks of each entry entity that also seed the second hop"
    )
    seed_hop_weight: float = Field(0.5, ge=0, description="weight of shared-rare-entity support from seed chunks")
    entity_hop_weight: float = Field(0.2, ge=0, description="weight of support from entry entities a chunk names")
    hop_max_chunks_per_entity: int = Field(25, ge=2, description="entities in more chunks are too common to hop")
    entity_chunks: int = Field(25, ge=0, description="chunks fetched per entry entity (most query-similar first)")
    # multi-hop bridge (query/local/multihop.py): the best chunks not yet hopped from seed the next hop; with
    # ranking ppr the walk then runs over what the bridge found too
    max_hops: int = Field(
        3, ge=2, le=6, description="hop limit; each hop past 2 is one more Bolt round trip (2: no bridge)"
    )
    bridge_frontier: int = Field(6, ge=0, le=50, description="best unexpanded chunks whose entities seed a hop")
    bridge_chunks_per_entity: int = Field(3, ge=1, le=100, description="chunks per frontier entity (most similar)")
    bridge_weight: float = Field(0.2, ge=0, description="weight of support from a frontier chunk (x its score)")
    bridge_max_df: int = Field(
        25, ge=2, description="entities in more chunks are not bridged through (only the most similar chunks are)"
    )
    bridge_synonyms: bool = Field(
        True, description="the bridge also hops from an entity to its synonyms (SYN edges, config synonyms)"
    )
    ranking: Literal["score", "ppr"] = Field(
        "ppr", description="ppr: similarity + link support + personalized PageRank mass; score: without the walk"
    )
    ppr: PprConfig = Field(PprConfig(), description="personalized PageRank settings (ranking ppr)")
    # expansion
    relationships_per_entity: int = Field(10, ge=0, le=1000, description="in-network first, then by weight")
    max_community_level: int = Field(2, ge=0, le=20, description="reports of communities up to this level")
    # routing and floors
    route: Literal["auto", "fact", "relational", "thematic"] = Field(
        "auto", description="auto: the rule (and llm_router) picks each question's route; else always this one"
    )
    llm_router: bool = Field(False, description="ask the LLM (prompts/route_question.txt) when the rule is unsure")
    chunk_floor: int = Field(3, ge=0, description="evidence floor: at least this many chunks when any exist")
    entity_floor: int = Field(3, ge=0, description="fact route: entities always given room")
    relationship_floor: int = Field(5, ge=0, description="relational route: relationships always given room")
    report_floor: int = Field(2, ge=0, description="thematic route: reports always given room")
    # one token currency no more: shorter forms and per-source caps (docs/concepts/local-search.md, "Routes, caps
    # and summaries")
    report_summary: bool = Field(True, description="a report that does not fit what is left enters as its summary")
    relational_caps: SourceCaps = Field(
        SourceCaps(relationship=0.5), description="budget shares per source on the relational route"
    )
    thematic_caps: SourceCaps = Field(
        SourceCaps(report=0.5), description="budget shares per source on the thematic route"
    )
    rerank: RerankConfig = Field(RerankConfig(), description="optional reranking of the chunk candidates")
    # presentation order of the included chunks (query/local/present.py); the selection above is unchanged
    chunk_rank: Literal["score", "vector", "graph"] = Field(
        "graph",
        description="order the included chunks are shown (and cited) in: score: the selection score's; vector: "
        "query similarity; graph: similarity + chunk_rank_weights x the walk, entity cover, seed and bridge support",
    )
    chunk_rank_weights: ChunkRankWeights = Field(
        ChunkRankWeights(), description="weights of chunk_rank graph (chosen by 5-fold CV on the dev split)"
    )


class TraceConfig(_Section):
    """The retrieval trace written to Neo4j as (:Retrieval)-[:INCLUDED|DROPPED]->(x)."""

    enabled: bool = Field(True, description="store each retrieval's trace in Neo4j; false: never store one")
    max_dropped: int = Field(500, ge=0, description="DROPPED edges written per retrieval (JSON keeps all)")


class GlobalConfig(_Section):
    """Global search: map over community reports in token-bounded batches, reduce the best key points.

    Budgets follow the arithmetic of docs/concepts/local-search.md: a map call gets ``min(window -
    map_max_tokens - prompt - question, map_cap)`` report tokens, the reduce call ``min(window - answer_reserve -
    prompt - question, reduce_cap)`` point tokens.
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
    response_type: str = Field(
        "multiple paragraphs", description="form of the answer the reduce prompt asks for, e.g. 'a single sentence'"
    )
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
    fulltext_k: int = Field(50, ge=1, le=10_000, description="hybrid: chunk fulltext hits fused with the vector hits")
    rrf_k: int = Field(60, ge=1, description="reciprocal rank fusion constant")
    context_cap: int = Field(8000, ge=256, description="cost ceiling on context tokens")
    answer_reserve: int = Field(1500, ge=16, description="output cap of the answer call")
    response_type: str = Field(
        "multiple paragraphs", description="form of the answer the prompt asks for, e.g. 'a single sentence'"
    )
    rerank: RerankConfig = Field(RerankConfig(), description="optional reranking of the chunk hits")


class DriftLocalConfig(LocalConfig):
    """DRIFT's own local-search settings for its steps: the keys of ``local``, a smaller context per step."""

    context_cap: int = Field(4000, ge=256, description="cost ceiling on context tokens of one DRIFT step")
    answer_reserve: int = Field(800, ge=16, description="output cap of one DRIFT step (its JSON answer)")
    response_type: str = Field(
        "concise answer in markdown",
        description="the answer a step's JSON 'response' asks for: the words after 'a' in prompts/drift_local.txt",
    )


class DriftConfig(_Section):
    """DRIFT search (docs/concepts/drift-search.md). Worst case with these defaults: 1 HyDE + 3 primer folds + 3 epochs
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
    sufficient_score: float = Field(
        90,
        ge=0,
        le=100,
        description="an answer scoring at least this may end the run as sufficient, once another answer agrees "
        "with it (agree_evidence / agree_similarity); the primer's own score never does",
    )
    agree_evidence: float = Field(
        0.3, ge=0, le=1, description="two answers agree when this share (Jaccard) of the node ids they cite is shared"
    )
    agree_similarity: float = Field(
        0.85, ge=-1, le=1, description="or when the cosine of their embeddings (citations removed) is at least this"
    )
    min_score_gain: float = Field(5, ge=0, le=100, description="stop when an epoch raises the best score less")
    dedup_similarity: float = Field(0.9, ge=0, le=1, description="follow-ups closer than this cosine are dropped")
    novelty_weight: float = Field(0.3, ge=0, le=1, description="queue priority = parent score and this x novelty")
    concurrency: int = Field(4, ge=1, le=64, description="parallel chat calls within an epoch")
    reduce: bool = Field(True, description="write one final answer; off = return the step tree")
    reduce_max_tokens: int = Field(1500, ge=64, description="output cap of the reduce call")
    reduce_context_tokens: int = Field(8000, ge=256, description="step answers the reduce reads (held back)")
    response_type: str = Field("multiple paragraphs", description="form of the final answer the reduce prompt asks for")
    local: DriftLocalConfig = Field(DriftLocalConfig(), description="local search settings of each DRIFT step")

    @model_validator(mode="after")
    def _router_off(self) -> DriftConfig:
        if self.local.llm_router:
            raise ValueError("drift.local.llm_router must be false: router calls would escape DRIFT's call budget")
        if self.local.rerank.provider == "llm":
            raise ValueError(
                "drift.local.rerank.provider must not be 'llm': rerank calls would escape DRIFT's call budget "
                "(use 'endpoint' or 'none')"
            )
        return self
