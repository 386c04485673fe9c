"""A scripted DRIFT world without a database: a bag-of-words embedder, reports, step contexts, and a
fake-server responder that grows a deterministic follow-up tree. Used by the DRIFT loop tests."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler
from typing import Any

import numpy as np

from driftgraph.config import DriftConfig, LLMConfig, PromptsConfig, parse_config
from driftgraph.llm.chat import ChatClient
from driftgraph.llm.ledger import Ledger
from driftgraph.llm.tokenizer import count_tokens, truncate_tokens
from driftgraph.query.drift.backend import PrimerReport
from driftgraph.query.drift.loop import DriftLoop
from driftgraph.query.drift.model import DriftRun, StepContext
from tests.support.fake_openai import FakeOpenAI

DIMS = 512


def bow_vector(text: str) -> np.ndarray:
    """Words hashed into buckets: similar wording -> high cosine, so semantic de-duplication is testable."""
    v = np.zeros(DIMS, dtype=np.float32)
    for word in re.findall(r"\w+", text.casefold()):
        v[int(hashlib.md5(word.encode()).hexdigest()[:8], 16) % DIMS] += 1.0
    n = np.linalg.norm(v)
    return v / n if n else v


def h(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)


COMMON_CHUNK = "c-common"  # Source 4 of every step context: what answers that agree by evidence cite


class FakeBackend:
    """``DriftBackend`` over scripted reports. Every step context shows Sources 1-4: 1-3 are chunks of its own
    (ids from the query's hash), 4 is ``COMMON_CHUNK``, the same chunk in every context."""

    def __init__(self, chat: ChatClient, n_reports: int = 6) -> None:
        self.chat = chat
        self.reports = {
            f"r{i:02d}": f"# Report {i}\nCommunity {i} is about topic{i} and agents of topic{i}."
            for i in range(n_reports)
        }
        self.embedded: list[str] = []
        self.contexts: list[str] = []

    def count_tokens(self, text: str) -> int:
        return count_tokens(text, "cl100k_base")

    def truncate(self, text: str, max_tokens: int) -> str:
        return truncate_tokens(text, max_tokens, "cl100k_base")

    def embed(self, texts: Sequence[str], phase: str = "steps") -> np.ndarray:
        self.embedded += list(texts)
        return np.stack([bow_vector(t) for t in texts])

    def report_ids(self) -> list[str]:
        return list(reversed(self.reports))  # unsorted on purpose: the loop sorts before drawing

    def report_text(self, report_id: str) -> str:
        return self.reports[report_id]

    def primer_reports(self, vector: np.ndarray, k: int) -> list[PrimerReport]:
        scored = sorted(
            ((float(bow_vector(t) @ vector), rid) for rid, t in self.reports.items()), key=lambda x: (-x[0], x[1])
        )
        return [
            PrimerReport(rid, rid[1:], f"Report {rid}", self.reports[rid], self.count_tokens(self.reports[rid]), s)
            for s, rid in scored[:k]
        ]

    def step_context(self, global_query: str, query: str, vector: np.ndarray) -> StepContext:
        self.contexts.append(query)
        text = (
            f"-----Sources-----\nid|text\n1|facts about {query}\n2|more facts\n3|other facts\n"
            "4|background every step sees"
        )
        ids = [*(f"c{h(query) % 1_000_003}-{k}" for k in range(3)), COMMON_CHUNK]
        items = [{"source": "chunk", "id": cid, "rank": k + 1, "tokens": 5} for k, cid in enumerate(ids)]
        id_map = {"Sources": {str(k + 1): cid for k, cid in enumerate(ids)}}
        return StepContext(text, self.count_tokens(text), {"Sources": set(id_map["Sources"])}, items, None, id_map)


def request_kind(req: dict[str, Any]) -> str:
    fmt = req.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return fmt["json_schema"]["name"]
    content = req["messages"][-1]["content"]
    return "hyde" if "hypothetical report" in content else "reduce"


def step_query(req: dict[str, Any]) -> str:
    m = re.search(r"Follow-up question of this step: (.*)", req["messages"][0]["content"])
    return m.group(1).strip() if m else ""


def is_repair(req: dict[str, Any]) -> bool:
    return len(req["messages"]) > 1


# Distinct questions about operation-dulce in layers (cosine < 0.75 between any two under MiniLM): under a real
# embedder "X then part k" variants are near-twins the queue drops, so end-to-end runs draw follow-ups from
# the next layer instead. A question's layer is its depth, so the reply stays a pure function of the request.
_SUBJECTS = [
    "Alex Mercer",
    "Taylor Cruz",
    "Jordan Hayes",
    "Sam Rivera",
    "the Paranormal Military Squad",
    "Dulce base",
    "the mainframe room",
    "the alien signal",
    "Washington command",
    "the underground laboratory",
]
_ASPECTS = [
    "What role does {s} play in Operation: Dulce?",
    "What risks does {s} face?",
    "How did {s} change by the end of the story?",
]
DULCE_LAYERS = [[a.format(s=s) for s in _SUBJECTS] for a in _ASPECTS]


def tree_responder(
    score: Callable[[str, int], float] = lambda q, depth: 40 + depth * 10,
    n_follow: int = 3,
    max_level: int = 10,
    layers: Sequence[Sequence[str]] | None = None,
    answer: Callable[[str, int], str] | None = None,
) -> Callable[[dict[str, Any]], str]:
    """Primer/step answers whose follow-ups name their parent, so the tree has distinct texts (or, with
    ``layers``, questions of the next layer picked by a hash of the parent's question). ``answer(query,
    depth)`` writes a step's response (default: "answer to QUERY", citing Sources 1 and the unshown 7).
    Pure: the same request always gets the same reply, whatever order requests arrive in."""
    layer_of = {q: d for d, layer in enumerate(layers or []) for q in layer}  # layer d = depth d + 1

    def follow(parent: str, level: int) -> list[str]:
        """Follow-ups of a question at depth ``level + 1`` (the primer is level -1)."""
        if level >= max_level:
            return []
        if layers:
            if level + 1 >= len(layers):
                return []
            nxt = layers[level + 1]
            return [nxt[(h(parent) + 3 * k) % len(nxt)] for k in range(n_follow)]
        return [f"{parent} then part {k}" for k in range(n_follow)]

    def respond(req: dict[str, Any]) -> str:
        kind = request_kind(req)
        if kind == "hyde":
            return "# Hypothetical report about topic1 and topic2"
        if kind == "reduce":
            return "Final answer [Data: Steps (s0, s1, s999)]"
        if kind == "drift_primer":
            labels = re.findall(r"^Report (\w+):", req["messages"][0]["content"], re.M)
            fold = labels[0] if labels else "x"
            return json.dumps(
                {
                    "intermediate_answer": f"primer from {fold} [Data: Reports ({fold}, 9999)]",
                    "score": score("", 0),
                    "follow_up_queries": follow(f"fold {fold}", -1)
                    if layers
                    else [f"what about branch {fold} item {k} of topic{k}" for k in range(n_follow)],
                }
            )
        q = step_query(req)
        level = layer_of.get(q, q.count(" then "))
        follows = follow(q, level)
        return json.dumps(
            {
                "response": answer(q, level + 1) if answer else f"answer to {q} [Data: Sources (1, 7)]",
                "score": score(q, level + 1),
                "follow_up_queries": follows,
            }
        )

    return respond


def drift_cfg(**over: Any) -> DriftConfig:
    base = {"concurrency": 4, "dedup_similarity": 0.97}
    base.update(over)
    return parse_config({"drift": base}).drift


def run_loop(
    fake, cfg: DriftConfig, seed: int = 7, question: str = "What connects topic1 and topic2?"
) -> tuple[DriftRun, Ledger]:
    ledger = Ledger()
    chat = ChatClient(LLMConfig(base_url=fake.base_url, api_key="k", backoff_base_s=0, model="fake"), ledger)
    backend = FakeBackend(chat)
    run = DriftLoop(question, cfg, backend, PromptsConfig(), seed=seed).run()
    return run, ledger


def sequence(run: DriftRun) -> list[tuple[str, str, int, str, int | None]]:
    return [(s.id, s.query, s.depth, s.status, s.epoch) for s in run.steps]


# -- answers for the stop rule's checks (tests/test_drift_stop.py, python -m bench drift-stop) ---------------
def own_words(query: str, n: int = 12) -> str:
    """Words drawn from the query's hash: two queries' texts share (almost) no word, so they do not agree."""
    return " ".join(f"w{h(f'{query}/{k}') % 1_000_003}" for k in range(n))


def disagreeing(query: str, depth: int) -> str:
    """A grounded answer in words of its own, citing its own chunk: agrees with no other answer."""
    return f"{own_words(query)} [Data: Sources (1)]"


def agreeing_by_evidence(query: str, depth: int) -> str:
    """Words of its own, but citing the chunk every context shows (``COMMON_CHUNK``)."""
    return f"{own_words(query)} [Data: Sources (4)]"


def agreeing_by_words(query: str, depth: int) -> str:
    """The same sentence from every step, each citing its own chunk."""
    return "Corran Foundry engineers recovered the turbines after the winter storm. [Data: Sources (1)]"


REPEATED = (
    "The council rebuilt the sea wall and moved the turbines to the new battery hall.\n\n"
    "The council rebuilt the sea wall and moved the turbines to the new battery hall.\n\n"
    "The council rebuilt the sea wall and moved the turbines to the new battery hall."
)

LENGTH = "\x00length"  # a reply ending in this goes out of ``CappedFake`` cut at max_tokens


class CappedFake(FakeOpenAI):
    """The fake server, except that a reply the responder ends with ``LENGTH`` is sent without the marker and
    with ``finish_reason: length``, as a server does with a reply cut at ``max_tokens``."""

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        base = super()._handler()

        class Handler(base):  # type: ignore[misc, valid-type]
            def _send(self, status: int, body: dict[str, Any]) -> None:
                for choice in body.get("choices") or []:
                    message = choice.get("message") or {}
                    content = message.get("content")
                    if isinstance(content, str) and content.endswith(LENGTH):
                        message["content"] = content[: -len(LENGTH)]
                        choice["finish_reason"] = "length"
                super()._send(status, body)

        return Handler
