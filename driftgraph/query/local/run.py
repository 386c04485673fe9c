"""``LocalRun``: one local question's fixed inputs, what every stage of local search reads.

Stages are functions ``stage(run, ...) -> new value`` (``entry.enter``, ``expand.expand``, ``multihop.bridge``,
``ppr.walk_graph``, ``rank.rank_all``, ``stages.fuse_original`` ...); what they find flows between them as
typed values (``EntryResult``, ``Neighbourhood``, ``Ranked``, ``Route``), never through a shared dict. The one
thing stages add to is the run's ``trace``: the record of the run, built as it goes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from driftgraph.prompts import render_prompt
from driftgraph.query.trace import Trace

if TYPE_CHECKING:
    from driftgraph.config import LocalConfig
    from driftgraph.runtime import Runtime
    from driftgraph.store.db import Store


@dataclass(frozen=True)
class Exclusions:
    """What must never enter: entity ids (the user's and those whose titles matched) and lower-cased titles,
    sorted so the queries' parameters do not depend on order."""

    ids: tuple[str, ...] = ()
    titles: tuple[str, ...] = ()


@dataclass(frozen=True)
class LocalRun:
    """The question as searched (``query``: standalone; ``question``: the user's words), its vector, the
    settings, the user's exclusions and the trace being recorded."""

    rt: Runtime
    settings: LocalConfig
    question: str
    query: str
    vector: Any  # the query's embedding (numpy array or list of floats)
    exclude: tuple[str, ...]
    trace: Trace

    @property
    def store(self) -> Store:
        return self.rt.store

    def exclusions(self, matched_ids: Sequence[str]) -> Exclusions:
        """The user's exclusions plus the entity ids whose titles they matched at entry."""
        return Exclusions(
            ids=tuple(sorted({*matched_ids, *self.exclude})), titles=tuple(sorted({e.lower() for e in self.exclude}))
        )

    def prompt(self, name: str, **values: object) -> str:
        """A prompt file rendered with the deployment's prompt overrides."""
        return render_prompt(name, self.rt.config.prompts, **values)

    def vector_list(self) -> list[float]:
        """The query vector as the list of floats a Cypher parameter takes."""
        return [float(x) for x in self.vector]
