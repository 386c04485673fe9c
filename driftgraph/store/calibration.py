"""The index's own entry threshold: ``local.min_similarity`` calibrated from its similarity distribution.

An absolute cosine threshold means something only against the cosines this embedder gives these descriptions:
0.42 was tuned with the offline MiniLM on MuSiQue's one-sentence triples, and an index of a small model's terse
descriptions put the README's own demo question's best entity at 0.41. So every ``import-graphrag``, ``index``
and ``adopt`` run ends by measuring where the index's **noise floor** lies and storing a threshold above it
on the ``DriftgraphMeta`` node (``cypher/calibration/*.cypher``); local search reads it in its entry round trip.

The noise floor is what a question about something else gets. ``PROBES`` are fixed questions on everyday
topics (cooking, sport, grammar, astronomy ...) that no particular index is about; each is embedded with the
index's embedder and its nearest entity and nearest community report are read from the vector indexes. The
``PERCENTILE``-th percentile of the probes' best entity cosines is the entity noise floor, and

    min_similarity = clamp(entity noise floor + MARGIN, LOWEST, HIGHEST)

(the same rule over the report vectors gives ``report_min_similarity``, the gate community reports face when no
entity entered: the thematic route's reports drawn by similarity). What moves it is the embedder's cosine scale,
the length and style of the descriptions and how much of the world the index covers: an encyclopedic index
(MuSiQue) has an entity near almost any question and gets a higher threshold than one small town's documents.
Nothing is random: every probe is used and the nearest neighbours come from the vector indexes.

An explicit ``local.min_similarity`` in the config wins; an index without a stored value (built before this, or
imported with ``--no-embed``) uses ``local.min_similarity_fallback``; the trace says which (``thresholds``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, fields
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

    from driftgraph.store.db import Store

METHOD = "offtopic-probes-v1"
PERCENTILE = 90.0  # of the probes' best cosines: nine in ten questions about something else stay below it
MARGIN = 0.05  # above the noise floor
LOWEST, HIGHEST = 0.15, 0.8  # a sane range whatever the distribution says
PROBE_K = 50  # candidates the vector index proposes per probe; their exact cosines decide (index scores are quantised)

# Questions about everyday things that no particular index is about (never edited without re-measuring: the
# stored calibrations were made with these; METHOD names the set).
PROBES: tuple[str, ...] = (
    "How long should pasta boil before it is al dente?",
    "What is the offside rule in football?",
    "How do I reset a forgotten email password?",
    "Which planet has the most moons?",
    "What temperature does water boil at on a high mountain?",
    "How many strings does a standard violin have?",
    "What is the difference between a list and a tuple in Python?",
    "How do you prune a rose bush in spring?",
    "What causes the northern lights?",
    "How much sleep does a teenager need each night?",
    "What is the plural of the word cactus?",
    "How do I remove a red wine stain from a carpet?",
    "Which muscles does a push-up train?",
    "What is the chemical symbol for gold?",
    "How do bees make honey?",
    "What does a mortgage interest rate depend on?",
    "How do I change a flat bicycle tyre?",
    "Why is the sky blue during the day?",
    "What are the rules of chess castling?",
    "How many calories are in a banana?",
    "What is the best way to learn a new language as an adult?",
    "How does a refrigerator keep food cold?",
    "What is a haiku and how many syllables does it have?",
    "How often should a dog be walked?",
    "What is the speed of sound in air?",
    "How do vaccines train the immune system?",
    "What is the tallest mountain in Africa?",
    "How do I knit a scarf for beginners?",
    "What does HTTP status code 404 mean?",
    "How is cheese made from milk?",
    "What is the longest river in South America?",
    "How do solar panels turn sunlight into electricity?",
    "What is a prime number?",
    "How do I brew a good cup of green tea?",
    "What are the symptoms of a common cold?",
    "How do cats purr?",
    "What is the area of a circle with radius three?",
    "How should I store fresh herbs in the kitchen?",
    "What makes a volcano erupt?",
    "How many players are on a basketball team on court?",
)


@dataclass(frozen=True)
class Calibration:
    """One index's calibrated thresholds and how they were measured (stored as JSON on ``DriftgraphMeta``)."""

    min_similarity: float
    report_min_similarity: float | None  # None: the index holds no report vectors
    entity_noise: float  # PERCENTILE of the probes' best entity cosines
    report_noise: float | None
    probes: int
    percentile: float
    margin: float
    bounds: tuple[float, float]
    method: str
    embedder: str
    entities: int  # entity vectors when it was measured
    reports: int
    computed_at: str

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["bounds"] = list(self.bounds)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Calibration:
        """From the stored JSON; keys this version does not know are ignored."""
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known and k != "bounds"}, bounds=tuple(data["bounds"]))


def threshold(best: Sequence[float]) -> tuple[float, float]:
    """(noise floor, threshold) from the probes' best cosines: ``clamp(percentile + MARGIN, LOWEST, HIGHEST)``."""
    import numpy as np

    noise = float(np.percentile(np.asarray(best, dtype=np.float64), PERCENTILE))
    return noise, round(min(HIGHEST, max(LOWEST, noise + MARGIN)), 3)


def calibrate(store: Store, embed: Callable[[list[str]], np.ndarray], embedder_id: str) -> Calibration | None:
    """Measure the index's noise floor and store the thresholds on ``DriftgraphMeta``; None (nothing stored,
    an older value removed) when the index holds no entity vector to measure."""
    vectors = embed(list(PROBES))
    rows = store.read("calibration/probe_hits", vectors=[[float(x) for x in v] for v in vectors], k=PROBE_K)
    entity_best = [float(r["entity"]) for r in rows if r["entity"] is not None]
    report_best = [float(r["report"]) for r in rows if r["report"] is not None]
    counts = store.read("calibration/counts")[0]
    if len(entity_best) < len(PROBES) or not counts["entities"]:
        clear_calibration(store)
        return None
    entity_noise, min_similarity = threshold(entity_best)
    report_noise, report_min = threshold(report_best) if report_best else (None, None)
    cal = Calibration(
        min_similarity=min_similarity,
        report_min_similarity=report_min,
        entity_noise=round(entity_noise, 3),
        report_noise=round(report_noise, 3) if report_noise is not None else None,
        probes=len(PROBES),
        percentile=PERCENTILE,
        margin=MARGIN,
        bounds=(LOWEST, HIGHEST),
        method=METHOD,
        embedder=embedder_id,
        entities=int(counts["entities"]),
        reports=int(counts["reports"]),
        computed_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )
    before = read_calibration(store)
    if before is not None and _measured(before) == _measured(cal):
        return before  # the same measurement: the stored one (and its time) stays, a re-run changes nothing
    store.run(
        "calibration/write",
        min_similarity=cal.min_similarity,
        report_min_similarity=cal.report_min_similarity,
        calibration=json.dumps(cal.to_dict(), sort_keys=True),
    )
    return cal


def _measured(cal: Calibration) -> dict[str, Any]:
    return {k: v for k, v in cal.to_dict().items() if k != "computed_at"}


def clear_calibration(store: Store) -> None:
    """Remove a stored calibration (an index without vectors has nothing to measure it on)."""
    store.run("calibration/clear")


def read_calibration(store: Store) -> Calibration | None:
    """The stored calibration, or None (no index, or none measured)."""
    rows = store.read("calibration/read")
    if not rows or not rows[0]["calibration"]:
        return None
    return Calibration.from_dict(json.loads(rows[0]["calibration"]))
