"""Benchmarks: driftgraph side by side with GraphRAG 3.2.0 (``python -m bench all``).

Not part of the driftgraph package: bench imports driftgraph's public API, never the reverse. The
baseline runs in its own virtualenv (``bench/.venv-graphrag``) that ``bench.env`` creates.
"""
