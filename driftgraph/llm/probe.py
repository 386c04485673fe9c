"""Which structured-output form an endpoint takes, found by one small call (``driftgraph doctor``).

A run learns a refusal on its first structured call (``compat.py``); doctor asks up front, so a user sees
before indexing what will be sent: ``json_schema``, ``json_object`` with the schema, a bare ``json_object``
or plain text, and what the server said to each form it refused.
"""

from __future__ import annotations

from dataclasses import dataclass

from driftgraph.config import LLMConfig
from driftgraph.errors import LLMError
from driftgraph.llm import compat
from driftgraph.llm.chat import ChatClient, schema
from driftgraph.llm.ledger import Ledger

_PROBE = schema("probe", {"ok": {"type": "boolean"}})
_MESSAGES = [{"role": "user", "content": 'Reply with the JSON object {"ok": true} and nothing else.'}]


@dataclass(frozen=True)
class Probe:
    sends: str  # json_schema, json_object_schema, json_object or text
    fallbacks: int  # forms the server refused before one was taken
    error: str | None = None  # the probe call itself failed (the form is then what was last learnt)

    def line(self) -> str:
        """What ``doctor`` prints."""
        if self.error is not None:
            return f"not probed: {self.error}"
        refused = f" ({self.fallbacks} stronger form{'s' * (self.fallbacks > 1)} refused)" if self.fallbacks else ""
        return f"{self.sends}{refused}"


def probe_structured(cfg: LLMConfig) -> Probe:
    """The form the endpoint takes, after one small structured call; ``llm.json_schema: false`` sends none."""
    if not cfg.json_schema:
        return Probe("text", 0)
    chat = ChatClient(cfg.model_copy(update={"max_retries": 0}), Ledger())
    try:
        chat.complete(_MESSAGES, phase="probe", max_tokens=16, json_schema=_PROBE)
    except LLMError as err:
        return Probe(compat.notes_for(cfg).structured, 0, str(err))
    return Probe(compat.notes_for(cfg).structured, chat.ledger.total.format_fallbacks)
