"""Test support for the JVM client: print the configured embedder's vector for one text as a JSON array.

The Java tests need the query vector the Python local search used, to run the same entry and expansion
statements with it. Run with the project's venv: ``python embed_question.py "text"``.
"""

import json
import sys

from driftgraph.api import open_engine

with open_engine() as engine:
    print(json.dumps([float(x) for x in engine.embed([sys.argv[1]])[0]]))
