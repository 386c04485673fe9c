"""Local search (DESIGN §4): rewrite -> budget -> entry -> expansion -> route -> fill -> render -> answer.

Two entry points, both taking a ``QueryDeps`` (see ``deps.py``) and a ``LocalConfig`` (the ``local``
config section, or DRIFT's own copy of it):

* ``build_local_context(...) -> LocalContext``: retrieval and assembly only, no chat call unless a rewrite
  or the LLM router is needed. Benchmarks and DRIFT's steps call this.
* ``local_search(...) -> SearchResult``: the context plus the answer, the citation check and the stored
  trace; the ``SearchResult`` is the shared JSON envelope.

Retrieval costs at most two Bolt round trips (entry, expansion); the trace write is one more.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from driftgraph.query.budget import BudgetBreakdown, Candidate
from driftgraph.query.trace import TraceRecorder

if TYPE_CHECKING:
    import numpy as np

    from driftgraph.config import LocalConfig
    from driftgraph.query.deps import QueryDeps
    from driftgraph.query.result import SearchResult


@dataclass
class LocalContext:
    """An assembled local-search context and everything needed to answer from it and explain it."""

    question: str
    query: str
    text: str
    tokens: int
    budget: BudgetBreakdown
    recorder: TraceRecorder
    included: list[Candidate] = field(default_factory=list)
    id_map: dict[str, dict[int, str]] = field(default_factory=dict)
    history_text: str = ""

    @property
    def chunk_ids(self) -> list[str]:
        """Ids of the included text units, in context order (what evidence recall is measured on)."""
        return [c.id for c in self.included if c.source == "chunk"]


def build_local_context(
    deps: QueryDeps,
    question: str,
    settings: LocalConfig,
    *,
    budget: int | None = None,
    history: Sequence[dict[str, str]] | None = None,
    exclude: Sequence[str] = (),
    route: str | None = None,
    query_vector: np.ndarray | None = None,
) -> LocalContext:
    """Retrieve and assemble a context for ``question`` within the budget; records the trace.

    ``budget`` fixes the context size (benchmarks); otherwise it is derived from the deployment.
    ``history`` is a list of ``{role, content}`` turns; ``exclude`` entity titles or ids never enter;
    ``route`` overrides ``settings.route``; ``query_vector`` skips embedding the (standalone) question.
    """
    raise NotImplementedError


def local_search(
    deps: QueryDeps,
    question: str,
    settings: LocalConfig,
    *,
    budget: int | None = None,
    history: Sequence[dict[str, str]] | None = None,
    exclude: Sequence[str] = (),
    route: str | None = None,
    context_only: bool = False,
    on_token: Callable[[str], None] | None = None,
    write_trace: bool = True,
    parent_id: str | None = None,
    params: dict[str, Any] | None = None,
) -> SearchResult:
    """Answer ``question`` (or, with ``context_only``, only assemble the context) and store the trace."""
    raise NotImplementedError
