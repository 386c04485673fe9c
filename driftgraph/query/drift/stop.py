"""DRIFT's stop rule: within the call budget it shares with global search (``query/calls.py``: never exceeded),
four reasons to end the loop early.

``StopRule.after_epoch`` checks, after the primer (epoch 0) and after every epoch of local searches, in this
order, ``budget``, ``sufficient``, ``plateau``, ``exhausted`` and ``max_depth``; the first that fires is the
reported reason.

``sufficient`` does not take the model's word for it (issue 37: a 1.5B model scored its own primer 100 and
the run stopped before any local search). A self-score is a claim; the claim needs corroboration that the
model does not give itself:

1. never after the primer: at least one epoch of local searches runs first, whatever the primer scored;
2. after an epoch, some *usable* answer scoring at least ``drift.sufficient_score`` must *agree* with another
   usable answer, at least one of the two from the epoch just run. Usable: the step is ``done`` (a failed
   step, a degenerate reply among them, has no score and never counts) and grounded (it cites at least one
   id it was shown; the citations the model made up are removed before this check);
3. two answers agree when either measure, neither of them the model's, reaches its threshold:
   - shared evidence: the Jaccard overlap of what they cite (node ids: the primer's report labels and a
     step's table ids mapped to the nodes they stand for) is at least ``AGREE_EVIDENCE``;
   - answer similarity: the cosine of their answers' embeddings (the runtime's embedder, citation markers
     removed) is at least ``AGREE_SIMILARITY``.

``corroborate`` is that check as a pure function; its ``Agreement`` (which answers agreed, by which measure,
with which shared ids and similarities) is stored in the trace for every epoch (``trace.stop.checks``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

STOP_REASONS = ("budget", "sufficient", "plateau", "exhausted", "max_depth", "error")

# Thresholds of the sufficient check (candidates for ``drift.*`` config keys).
AGREE_EVIDENCE = 0.3  # Jaccard of the node ids two answers cite: at least this share of what they cite is shared
AGREE_SIMILARITY = 0.85  # cosine of two answers' embeddings: they say the same thing in other words
MAX_PAIRS_SHOWN = 20  # agreeing pairs kept in the trace per check (the rest are counted)

PRIMER_NOTE = "the primer's own score never stops the run: local searches must corroborate it first"

Vectors = Callable[[Sequence["Answer"]], np.ndarray]


@dataclass(frozen=True)
class Answer:
    """One usable answer as the sufficient check sees it: its score, its evidence and its words."""

    id: str
    epoch: int
    score: float
    evidence: frozenset[str]  # "Label:node id" of every citation that named something the step was shown
    text: str  # the answer without its citation markers (what is embedded)


@dataclass(frozen=True)
class Pair:
    """Two answers compared: the overlap of their evidence and (when measured) their similarity."""

    a: str
    b: str
    overlap: float
    shared: tuple[str, ...]
    similarity: float | None
    measures: tuple[str, ...]  # the measures that reached their threshold: "evidence", "similarity"

    @property
    def agree(self) -> bool:
        return bool(self.measures)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"a": self.a, "b": self.b, "measures": list(self.measures)}
        out["evidence_overlap"] = round(self.overlap, 4)
        if self.shared:
            out["shared"] = list(self.shared)
        if self.similarity is not None:
            out["similarity"] = round(self.similarity, 4)
        return out


@dataclass
class Agreement:
    """The sufficient check after one epoch (depth 0 = the primer): what was claimed and what corroborated it."""

    depth: int
    grounded: list[str] = field(default_factory=list)  # usable answers that cite something they were shown
    ungrounded: list[str] = field(default_factory=list)  # done, but citing nothing shown: cannot corroborate
    failed: list[str] = field(default_factory=list)  # steps that failed in this epoch: their scores do not count
    claim: tuple[str, float] | None = None  # the best score of a usable answer, and whose
    compared: int = 0
    agreed: list[Pair] = field(default_factory=list)  # pairs with a claimant that agree, best first
    closest: Pair | None = None  # the pair with a claimant that came nearest without agreeing
    sufficient: bool = False
    note: str = ""
    similarity_error: str | None = None  # the embedder failed: similarity unmeasured, evidence still counts

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "depth": self.depth,
            "sufficient": self.sufficient,
            "note": self.note,
            "claim": None if self.claim is None else {"step": self.claim[0], "score": self.claim[1]},
            "grounded": list(self.grounded),
            "ungrounded": list(self.ungrounded),
            "failed": list(self.failed),
            "compared": self.compared,
            "agreed": [p.to_dict() for p in self.agreed[:MAX_PAIRS_SHOWN]],
            "agreed_total": len(self.agreed),
        }
        if self.closest is not None:
            out["closest"] = self.closest.to_dict()
        if self.similarity_error is not None:
            out["similarity_error"] = self.similarity_error
        return out


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    union = a | b
    return len(a & b) / len(union) if union else 0.0


@dataclass(frozen=True)
class StopRule:
    sufficient_score: float
    min_score_gain: float
    max_depth: int
    agree_evidence: float = AGREE_EVIDENCE
    agree_similarity: float = AGREE_SIMILARITY

    def corroborate(
        self,
        depth: int,
        answers: Sequence[Answer],
        latest: set[str],
        vectors: Vectors | None = None,
        failed: Sequence[str] = (),
    ) -> Agreement:
        """The sufficient check over the usable (``done``) ``answers`` so far; ``latest`` are the ids run in this
        epoch, ``failed`` the ids that failed in it (recorded only: a failed step has no answer to count).

        ``vectors`` embeds answers (unit vectors, in order); it is called at most once, and only when a
        grounded answer claims the sufficient score (no claim, no embedding cost)."""
        out = Agreement(depth, failed=list(failed))
        grounded = [a for a in answers if a.evidence]
        out.grounded = [a.id for a in grounded]
        out.ungrounded = [a.id for a in answers if not a.evidence]
        if answers:
            best = max(answers, key=lambda a: (a.score, -_order(a.id)))
            out.claim = (best.id, best.score)
        if depth == 0:
            out.note = PRIMER_NOTE
            return out
        claimants = {a.id for a in grounded if a.score >= self.sufficient_score}
        if not claimants:
            out.note = f"no grounded answer scored at least {self.sufficient_score:g}: nothing to corroborate"
            return out
        pairs = [
            (x, y)
            for i, x in enumerate(grounded)
            for y in grounded[i + 1 :]
            if (x.id in latest or y.id in latest) and (x.id in claimants or y.id in claimants)
        ]
        out.compared = len(pairs)
        if not pairs:
            out.note = "no other grounded answer to compare the claim with"
            return out
        paired = {a.id for pair in pairs for a in pair}
        involved = [a for a in grounded if a.id in paired]  # only answers in a pair are embedded
        index = {a.id: k for k, a in enumerate(involved)}
        sims: np.ndarray | None = None
        if vectors is not None:
            try:
                vecs = np.asarray(vectors(involved), dtype=np.float32)
                sims = vecs @ vecs.T
            except Exception as err:  # no similarity this time; shared evidence is still measured
                out.similarity_error = f"{type(err).__name__}: {err}"[:300]
        judged = []
        for x, y in pairs:
            overlap = jaccard(x.evidence, y.evidence)
            sim = None if sims is None else float(sims[index[x.id], index[y.id]])
            measures = tuple(
                name
                for name, ok in (
                    ("evidence", overlap >= self.agree_evidence),
                    ("similarity", sim is not None and sim >= self.agree_similarity),
                )
                if ok
            )
            judged.append(Pair(x.id, y.id, overlap, tuple(sorted(x.evidence & y.evidence)), sim, measures))
        rank = sorted(judged, key=lambda p: (-len(p.measures), -p.overlap, -(p.similarity or 0.0), p.a, p.b))
        out.agreed = [p for p in rank if p.agree]
        misses = [p for p in rank if not p.agree]
        out.closest = misses[0] if misses else None
        out.sufficient = bool(out.agreed)
        if out.sufficient:
            p = out.agreed[0]
            out.note = f"{p.a} and {p.b} agree by {' and '.join(p.measures)}"
        else:
            out.note = (
                f"no answer scoring at least {self.sufficient_score:g} agrees with another "
                f"(evidence overlap < {self.agree_evidence:g}, similarity < {self.agree_similarity:g})"
            )
        return out

    def after_epoch(self, s: EpochState) -> str | None:
        """The first reason that fires, or ``None`` to run another epoch."""
        if s.budget_fired or s.calls_left <= 0:
            return "budget"
        if s.depth >= 1 and s.agreement is not None and s.agreement.sufficient:
            return "sufficient"
        if s.depth >= 1:
            gain = (s.best_after or 0.0) - (s.best_before or 0.0)
            if gain < self.min_score_gain:
                return "plateau"
        if s.queue_size == 0:
            return "exhausted"
        if s.depth >= self.max_depth:
            return "max_depth"
        return None

    def thresholds(self) -> dict[str, float]:
        return {
            "sufficient_score": self.sufficient_score,
            "agree_evidence": self.agree_evidence,
            "agree_similarity": self.agree_similarity,
        }


@dataclass(frozen=True)
class EpochState:
    """What the stop rule looks at after an epoch (or after the primer, as epoch 0)."""

    depth: int
    best_before: float | None
    best_after: float | None
    queue_size: int
    budget_fired: bool
    calls_left: int
    agreement: Agreement | None = None  # the sufficient check (``StopRule.corroborate``); None = not sufficient


def _order(step_id: str) -> int:
    digits = step_id[1:]
    return int(digits) if digits.isdigit() else 0
