"""Code that runs inside the baseline virtualenv (``bench/.venv-graphrag``, graphrag==3.2.0 from PyPI).

Each module is a script (``python -m bench.gr.<name> ARGS``) that writes one JSON result file; the
orchestrator in the driftgraph virtualenv starts it with ``bench.env.run_baseline``.
"""
