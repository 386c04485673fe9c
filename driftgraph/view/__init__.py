"""A self-contained HTML page for one stored retrieval: ``render_page`` (pure) and ``fetch_subgraph`` (Neo4j)."""

from driftgraph.view.graph import fetch_subgraph
from driftgraph.view.page import render_page

__all__ = ["fetch_subgraph", "render_page"]
