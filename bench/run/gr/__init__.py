"""Code that runs inside the baseline virtualenv (``bench/.venv-graphrag``, graphrag==3.2.0 from PyPI).

Each module is a worker part (``python -m bench gr-<name> ARGS --out FILE``) that writes one JSON result file;
the suite in the driftgraph virtualenv starts it with ``bench.run.env.run_baseline``. Only ``bench.paths``,
``bench.metrics`` and the plain helpers of ``bench.run`` (data, embcache, fake_llm) may be imported here.
"""
