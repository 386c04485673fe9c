"""DRIFT search (README "DRIFT search"): HyDE and a primer over community reports, then epochs of local-search steps
driven by a de-duplicated, capped follow-up queue, under an explicit stop rule and a seeded generator.

Modules: ``parse`` (tolerant JSON), ``queue`` (follow-ups), ``stop`` (budget + stop rule), ``calls`` (budgeted
concurrent calls with one repair), ``loop`` (the run), ``reduce``, ``graph`` (Neo4j backend), ``search``
(the envelope and the stored trace).
"""
