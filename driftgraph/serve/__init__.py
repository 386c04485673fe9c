"""``driftgraph serve``: the HTTP API, the OpenAI-compatible endpoint and the MCP server (docs/guides/serving.md)."""

from driftgraph.serve.app import create_app

__all__ = ["create_app"]
