"""The half of the bench that renders: ``results/raw/*.json`` into ``results/latest.md`` (``latest``, one module
per group of sections) and the PNG plots (``plots``). It reads raw files only and imports nothing from
``bench.run``."""
