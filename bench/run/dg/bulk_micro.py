"""Micro measurements behind the bulk-import defaults, on a database already holding a synthetic import.

python -m bench bulk-micro sweep SYNTH_DIR 10000 2000 500    # entity vectors, index present, per batch size
python -m bench bulk-micro order SYNTH_DIR 2000              # index present vs absent + populated afterwards

Each step removes every entity vector first, then writes them all again from the synthetic
``embeddings.entity_description.parquet`` with ``cypher/ingest/embeddings_entity.cypher``; prints seconds.
Times on a shared machine are only comparable within one run.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from neo4j import GraphDatabase

from driftgraph.store.bulk import vector_batches
from driftgraph.store.cypher import load

URI = os.environ.get("NEO4J_URI", "bolt://127.0.0.1:7703")
AUTH = ("neo4j", os.environ.get("NEO4J_PASSWORD", "driftgraph-test"))


def main(argv: list[str] | None = None) -> None:
    """``sweep|order SYNTH_DIR SIZES...``."""
    argv = sys.argv[2:] if argv is None else argv
    mode, folder, sizes = argv[0], Path(argv[1]), [int(x) for x in argv[2:]]
    vectors = folder / "embeddings.entity_description.parquet"
    drv = GraphDatabase.driver(URI, auth=AUTH)
    write_q = load("ingest/embeddings_entity")

    def clear() -> None:
        with drv.session() as s:
            s.run("MATCH (n:__Entity__) REMOVE n.embedding").consume()

    def write(bs: int) -> float:
        t = time.perf_counter()
        with drv.session() as s:
            for b in vector_batches(vectors, bs):
                s.execute_write(lambda tx, b=b: tx.run(write_q, rows=b).consume())
        return time.perf_counter() - t

    if mode == "sweep":
        for bs in sizes:
            clear()
            print(bs, write(bs), flush=True)
    else:
        clear()
        print("with index", write(sizes[0]), flush=True)
        drv.execute_query("DROP INDEX entity_embedding")
        clear()
        print("no index", write(sizes[0]), flush=True)
        t = time.perf_counter()
        drv.execute_query(
            "CREATE VECTOR INDEX entity_embedding IF NOT EXISTS FOR (n:__Entity__) ON n.embedding "
            "OPTIONS {indexConfig: {`vector.dimensions`: 384, `vector.similarity_function`: 'cosine'}}"
        )
        drv.execute_query("CALL db.awaitIndexes(3000)")
        print("populate", time.perf_counter() - t, flush=True)
    drv.close()
