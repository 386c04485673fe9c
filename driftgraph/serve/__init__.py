"""``driftgraph serve``: the HTTP API, the OpenAI-compatible endpoint and the MCP server (README "Serving")."""

from driftgraph.serve.app import create_app

__all__ = ["create_app"]
