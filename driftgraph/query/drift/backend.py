"""What the DRIFT loop needs from the outside world, as a protocol, so the loop is testable without a DB."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from driftgraph.query.drift.calls import Chat
from driftgraph.query.drift.model import StepContext

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True)
class PrimerReport:
    """A community report offered to the primer; ``label`` is the short id the model cites."""

    id: str
    label: str
    title: str
    text: str
    tokens: int
    similarity: float


class DriftBackend(Protocol):
    @property
    def chat(self) -> Chat: ...

    def count_tokens(self, text: str) -> int: ...

    def truncate(self, text: str, max_tokens: int) -> str: ...

    def embed(self, texts: Sequence[str], phase: str = "steps") -> np.ndarray:
        """Unit vectors; ``phase`` names the ledger phase the embedding cost goes to."""
        ...

    def report_ids(self) -> list[str]:
        """Ids of every community report with content, sorted (the HyDE template is drawn from them)."""
        ...

    def report_text(self, report_id: str) -> str: ...

    def primer_reports(self, vector: np.ndarray, k: int) -> list[PrimerReport]:
        """The ``k`` reports most similar to ``vector``, best first."""
        ...

    def step_context(self, global_query: str, query: str, vector: np.ndarray) -> StepContext:
        """A local-search context for one step (DRIFT's own local settings); no chat call."""
        ...


def count_messages(backend: DriftBackend, messages: list[dict[str, str]]) -> int:
    """Prompt tokens of a chat request as OpenAI counts them: content plus ~4 per message and 3 per reply."""
    return sum(backend.count_tokens(m.get("content") or "") + 4 for m in messages) + 3
