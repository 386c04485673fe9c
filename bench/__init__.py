"""Benchmarks: driftgraph side by side with GraphRAG 3.2.0 (``python -m bench <part>``; ``--help`` lists them).

Not part of the driftgraph package: bench imports driftgraph's public API, never the reverse. Two halves:
``bench.run`` measures and writes ``results/raw``, ``bench.report`` renders them; both use ``bench.paths`` and
``bench.metrics``. The baseline runs in its own virtualenv (``bench/.venv-graphrag``) that ``bench.run.env``
creates.
"""
