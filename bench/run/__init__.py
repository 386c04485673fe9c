"""The half of the bench that measures: the suite's parts (``suite``, ``parts``, ``parts_routes``), what they
share (``context``, ``env``, ``neo4j``, ``machine``, ``data``, ``embcache``, ...), the driftgraph side (``dg/``,
the project's virtualenv) and the GraphRAG side (``gr/``, ``bench/.venv-graphrag``). It writes
``bench/results/raw/*.json``; ``bench.report`` renders them."""
