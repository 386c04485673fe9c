"""The server's cost caps bound every request: a request may lower a cap, never raise it.

One function for every interface (HTTP query routes, the OpenAI-compatible endpoint and MCP all pass through
``ServeState.query``; the HTTP routes also check before they start a stream, so the refusal is a status and not
an event). A raise is refused, not clamped: a caller who asked for 10,000 chat calls and silently got 32 would
read a short answer as the index's fault; 422 names the field and the server's limit, so it can retry within it.
"""

from __future__ import annotations

from typing import Any

from driftgraph import QueryRequest
from driftgraph.config import Config
from driftgraph.serve.errors import ApiError

# request field -> the key of the mode's config section that caps it
CAPS: dict[str, str] = {
    "max_llm_calls": "max_llm_calls",
    "max_prompt_tokens": "max_prompt_tokens",
    "max_depth": "max_depth",
    "budget": "context_cap",
}


def over_cap(request: QueryRequest, config: Config) -> tuple[str, int, int, str] | None:
    """The first field of ``request`` above the server's cap: (field, asked, limit, config key), or None."""
    section = type(request).section
    settings: Any = getattr(config, section)
    for field, key in CAPS.items():
        asked = getattr(request, field, None)
        limit = getattr(settings, key, None)
        if isinstance(asked, int) and isinstance(limit, int) and asked > limit:
            return field, asked, limit, f"{section.rstrip('_')}.{key}"
    return None


def enforce_caps(request: QueryRequest, config: Config) -> None:
    """Raise 422 (``code`` = the field) when ``request`` asks for more than the server's configuration allows."""
    found = over_cap(request, config)
    if found is not None:
        field, asked, limit, key = found
        raise ApiError(
            422,
            f"{field}={asked} is above this server's limit {limit} ({key}); ask for {limit} or less",
            "invalid_request_error",
            field,
        )
