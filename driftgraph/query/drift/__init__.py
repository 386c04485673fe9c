"""DRIFT search (docs/concepts/drift-search.md): HyDE and a primer over community reports, then epochs of
local-search steps driven by a de-duplicated, capped follow-up queue, under an explicit stop rule and a seeded
generator.

Modules: ``parse`` (tolerant JSON), ``queue`` (follow-ups), ``stop`` (the stop rule; the call budget it shares
with global search is ``query/calls.py``), ``calls`` (budgeted concurrent calls with one repair), ``loop`` (the
run), ``reduce``, ``graph`` (Neo4j backend), ``model`` and ``result`` (the run's and the result's types),
``search`` (the run, ended through ``query/finish.py``).
"""
