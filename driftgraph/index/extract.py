"""Entities, relationships and (optionally) claims from each chunk, with gleaning rounds.

Each chunk is one conversation: the extraction prompt, then up to ``index.max_gleanings`` follow-ups
asking for what was missed (stopping early when a round adds nothing). A chunk whose answer is unusable
after one repair retry is recorded as a failure with its reason; the run goes on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from driftgraph.config import Config
from driftgraph.errors import CallFailed
from driftgraph.index.ask import Answer, Ask, ask_json
from driftgraph.index.chunk import Chunk
from driftgraph.index.parse import ClaimRecord, EntityRecord, RelationshipRecord, parse_claims, parse_graph
from driftgraph.llm.chat import ChatClient, schema
from driftgraph.parallel import parallel_map
from driftgraph.prompts import render_prompt

_S = {"type": "string"}


def _obj(props: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}


GRAPH_SCHEMA = schema(
    "extract_graph",
    {
        "entities": {"type": "array", "items": _obj({"title": _S, "type": _S, "description": _S})},
        "relationships": {
            "type": "array",
            "items": _obj({"source": _S, "target": _S, "description": _S, "strength": {"type": "number"}}),
        },
    },
)
CLAIM_FIELDS = ("subject", "object", "type", "status", "start_date", "end_date", "description", "source_text")
CLAIMS_SCHEMA = schema("extract_claims", {"claims": {"type": "array", "items": _obj(dict.fromkeys(CLAIM_FIELDS, _S))}})


@dataclass
class ChunkExtraction:
    chunk_id: str
    entities: list[EntityRecord] = field(default_factory=list)
    relationships: list[RelationshipRecord] = field(default_factory=list)
    claims: list[ClaimRecord] = field(default_factory=list)
    dropped_records: int = 0
    gleaning_rounds: int = 0
    llm_calls: int = 0
    failures: list[str] = field(default_factory=list)

    def add_graph(self, ans: Answer[tuple[list[EntityRecord], list[RelationshipRecord], int]]) -> bool:
        """Add one answer's records; False when it had none."""
        ents, rels, dropped = ans.value
        self.entities += ents
        self.relationships += rels
        self.dropped_records += dropped
        self.llm_calls += ans.fresh_calls
        return bool(ents or rels)

    @property
    def failed(self) -> bool:
        """The main extraction failed (gleaning or claim failures keep what was found)."""
        return any(f.startswith("extract:") for f in self.failures)


def extract_chunk(chunk: Chunk, chat: ChatClient, cfg: Config) -> ChunkExtraction:
    icfg = cfg.index
    out = ChunkExtraction(chunk.id)
    types = ", ".join(icfg.entity_types)
    prompt = render_prompt("extract_graph", cfg.prompts, entity_types=types, input_text=chunk.text)
    messages = [{"role": "user", "content": prompt}]
    cap, guard = icfg.extract_max_tokens, icfg.loop_guard
    try:
        ans = ask_json(chat, messages, parse_graph, Ask("extract", cap, GRAPH_SCHEMA, guard, salvage=True), cfg.prompts)
    except CallFailed as err:
        out.failures.append(f"extract: {err}")
        return out
    out.add_graph(ans)
    follow_up = render_prompt("extract_graph_continue", cfg.prompts)
    for _ in range(icfg.max_gleanings):
        messages = [*messages, {"role": "assistant", "content": ans.text}, {"role": "user", "content": follow_up}]
        try:
            ask = Ask("extract_gleaning", cap, GRAPH_SCHEMA, guard, salvage=True)
            ans = ask_json(chat, messages, parse_graph, ask, cfg.prompts)
        except CallFailed as err:
            out.failures.append(f"gleaning: {err}")
            break
        out.gleaning_rounds += 1
        if not out.add_graph(ans):
            break
    if icfg.claims:
        claim_prompt = render_prompt(
            "extract_claims",
            cfg.prompts,
            claim_description=icfg.claim_description,
            entity_types=types,
            input_text=chunk.text,
        )
        claim_messages = [{"role": "user", "content": claim_prompt}]
        try:
            ask = Ask("extract_claims", cap, CLAIMS_SCHEMA, guard, salvage=True)
            got = ask_json(chat, claim_messages, parse_claims, ask, cfg.prompts)
        except CallFailed as err:
            out.failures.append(f"claims: {err}")
        else:
            claims, dropped = got.value
            out.claims += claims
            out.dropped_records += dropped
            out.llm_calls += got.fresh_calls
    return out


def extract_all(
    chunks: Sequence[Chunk], chat: ChatClient, cfg: Config, on_done: Callable[[], None] | None = None
) -> list[ChunkExtraction]:
    """One extraction per chunk, ``index.concurrency`` at a time, in chunk order."""
    return parallel_map(lambda c: extract_chunk(c, chat, cfg), chunks, cfg.index.concurrency, on_done)
