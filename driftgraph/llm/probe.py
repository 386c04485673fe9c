"""Which structured-output form an endpoint takes, found by one small call (``driftgraph doctor``).

A run learns a refusal on its first structured call (``compat.py``); doctor asks up front, so a user sees
before indexing what will be sent: ``json_schema``, ``json_object`` with the schema, a bare ``json_object``
or plain text, and what the server said to each form it refused.
"""

from __future__ import annotations

from typing import Any

from driftgraph.config import LLMConfig
from driftgraph.errors import LLMError
from driftgraph.llm import compat
from driftgraph.llm.chat import ChatClient, schema
from driftgraph.llm.ledger import Ledger

_PROBE = schema("probe", {"ok": {"type": "boolean"}})
_MESSAGES = [{"role": "user", "content": 'Reply with the JSON object {"ok": true} and nothing else.'}]


def probe_structured(cfg: LLMConfig) -> dict[str, Any]:
    """``{"sends": form, "fallbacks": n}`` after one structured call; ``json_schema: false`` sends none."""
    if not cfg.json_schema:
        return {"sends": "text", "fallbacks": 0, "note": "llm.json_schema is false: no response_format is sent"}
    probe_cfg = cfg.model_copy(update={"max_retries": 0})
    chat = ChatClient(probe_cfg, Ledger())
    try:
        chat.complete(_MESSAGES, phase="probe", max_tokens=16, json_schema=_PROBE)
    except LLMError as err:
        return {"sends": compat.notes_for(cfg).structured, "fallbacks": 0, "error": str(err)}
    fallbacks = chat.ledger.total.format_fallbacks
    return {"sends": compat.notes_for(cfg).structured, "fallbacks": fallbacks}
