"""The follow-up queue: normalise, de-duplicate, cap per answer, rank by parent score and novelty.

Identity of a follow-up is its normalised text (case, accents' compatibility forms, punctuation and
spacing do not make a new question), then its meaning: a follow-up whose embedding is closer than
``dedup_similarity`` to any question already asked, queued or run is dropped with the id it duplicates.
Ranking is deterministic: ``(1 - novelty_weight) * parent_score / 100 + novelty_weight * novelty``,
where novelty is the distance to what has already been run (updated greedily inside an epoch, so one
epoch does not spend its width on near-twins); the seeded generator only orders exact ties.
"""

from __future__ import annotations

import random
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

_NON_WORD = re.compile(r"[^\w\s]+")

Embed = Callable[[Sequence[str]], np.ndarray]


def normalise(query: str) -> str:
    """Case-, punctuation- and whitespace-insensitive form used as a follow-up's identity."""
    text = unicodedata.normalize("NFKC", query).casefold()
    return " ".join(_NON_WORD.sub(" ", text).split())


@dataclass
class Offer:
    """The follow-ups proposed by one answer (a primer fold or a step)."""

    parent_id: str
    parent_score: float
    depth: int
    queries: list[str]
    source: str = ""


@dataclass
class Item:
    """A follow-up accepted into the queue; ``id`` is assigned in deterministic acceptance order."""

    id: str
    parent_id: str
    parent_score: float
    depth: int
    query: str
    norm: str
    vector: np.ndarray = field(repr=False)
    tiebreak: float
    priority: float = 0.0
    novelty: float = 1.0


def _unit(vectors: np.ndarray) -> np.ndarray:
    v = np.asarray(vectors, dtype=np.float32)
    if v.ndim == 1:
        v = v[None, :]
    out: np.ndarray = v / np.clip(np.linalg.norm(v, axis=1, keepdims=True), 1e-12, None)
    return out


class FollowUpQueue:
    """Holds accepted follow-ups until an epoch takes them; remembers everything asked so far."""

    def __init__(
        self,
        *,
        dedup_similarity: float,
        max_per_answer: int,
        novelty_weight: float,
        rng: random.Random,
        embed: Embed,
        new_id: Callable[[], str],
    ) -> None:
        self._threshold = dedup_similarity
        self._cap = max_per_answer
        self._w = novelty_weight
        self._rng = rng
        self._embed = embed
        self._new_id = new_id
        self._known: dict[str, str] = {}  # normalised text -> id of the question/step that has it
        self._known_ids: list[str] = []
        self._known_vecs: list[np.ndarray] = []
        self._run_vecs: list[np.ndarray] = []  # what has been (or is being) run: novelty is measured here
        self.pending: list[Item] = []
        self.dropped: list[dict[str, Any]] = []

    def mark_run(self, step_id: str, query: str, vector: np.ndarray | None = None) -> None:
        """Register a question that is asked outside the queue (the user's question at the root)."""
        vec = _unit(self._embed([query]) if vector is None else vector)[0]
        self._known.setdefault(normalise(query), step_id)
        self._known_ids.append(step_id)
        self._known_vecs.append(vec)
        self._run_vecs.append(vec)

    def offer(self, offers: Sequence[Offer]) -> list[Item]:
        """Accept what is new, in offer order; drops are recorded with their reason. One embedding call."""
        fresh: list[tuple[Offer, str, str]] = []
        batch_norms: set[str] = set()
        for off in offers:
            for q in off.queries:
                norm = normalise(q)
                if not norm:
                    self._drop(off, q, "empty")
                elif norm in self._known:
                    self._drop(off, q, "duplicate", self._known[norm])
                elif norm in batch_norms:
                    self._drop(off, q, "duplicate", "same batch")
                else:
                    batch_norms.add(norm)
                    fresh.append((off, q, norm))
        if not fresh:
            return []
        vecs = _unit(self._embed([q for _, q, _ in fresh]))
        accepted: list[Item] = []
        per_offer: dict[int, int] = {}
        for (off, q, norm), vec in zip(fresh, vecs, strict=True):
            if norm in self._known:  # an earlier candidate of this batch took the text
                self._drop(off, q, "duplicate", self._known[norm])
                continue
            if per_offer.get(id(off), 0) >= self._cap:
                self._drop(off, q, "cap")
                continue
            if self._known_vecs:
                sims = np.stack(self._known_vecs) @ vec
                best = int(np.argmax(sims))
                if float(sims[best]) > self._threshold:
                    self._drop(off, q, "similar", self._known_ids[best], float(sims[best]))
                    continue
            item = Item(self._new_id(), off.parent_id, off.parent_score, off.depth, q, norm, vec, self._rng.random())
            per_offer[id(off)] = per_offer.get(id(off), 0) + 1
            self._known[norm] = item.id
            self._known_ids.append(item.id)
            self._known_vecs.append(vec)
            self.pending.append(item)
            accepted.append(item)
        return accepted

    def take(self, n: int, max_depth: int | None = None) -> list[Item]:
        """The ``n`` best items, chosen greedily so each pick lowers the novelty of its near-twins."""
        chosen: list[Item] = []
        pool = [it for it in self.pending if max_depth is None or it.depth <= max_depth]
        while pool and len(chosen) < n:
            for it in pool:
                it.novelty = self._novelty(it.vector)
                it.priority = round((1 - self._w) * it.parent_score / 100.0 + self._w * it.novelty, 9)
            pool.sort(key=lambda it: (-it.priority, it.tiebreak))
            pick = pool.pop(0)
            chosen.append(pick)
            self._run_vecs.append(pick.vector)
        taken = {it.id for it in chosen}
        self.pending = [it for it in self.pending if it.id not in taken]
        return chosen

    def _novelty(self, vec: np.ndarray) -> float:
        if not self._run_vecs:
            return 1.0
        return float(1.0 - max(0.0, float(np.max(np.stack(self._run_vecs) @ vec))))

    def _drop(
        self, off: Offer, query: str, reason: str, duplicate_of: str | None = None, similarity: float | None = None
    ) -> None:
        row: dict[str, Any] = {"parent": off.parent_id, "query": query, "reason": reason}
        if off.source:
            row["source"] = off.source
        if duplicate_of is not None:
            row["duplicate_of"] = duplicate_of
        if similarity is not None:
            row["similarity"] = round(similarity, 4)
        self.dropped.append(row)
