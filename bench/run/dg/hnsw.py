"""What the HNSW settings of a Neo4j vector index cost to build and give back in recall.

python -m bench dg-hnsw --uri bolt://... --out X.json [--synth DIR] [--settings 16:100,16:50,8:32]

For each data set the vectors are written once to nodes of a label of their own, without an index; then,
per setting ``m:ef_construction``, the index is created and timed until ONLINE (the same HNSW inserts an
import pays per vector). Every query vector is searched through ``db.index.vector.queryNodes`` for its best
10 (of 10 asked, and of 30 asked as local search asks) and compared with the exact top 10 (numpy, cosine);
then the index is dropped. Data sets: the MuSiQue entities with the dev questions as queries (real
embeddings, the local model), and a synthetic index's entities with its query vectors (random unit
vectors: the hard case for HNSW).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from bench.run import data
from bench.run.dg import common

LABEL = "HnswBench"
K = 10
ASKED = (10, 30)
WRITE_BATCH = 2000


def _musique(eng) -> tuple[np.ndarray, np.ndarray]:
    emb = eng.runtime.embedder  # the bench's cache: the texts local search's entities were embedded from
    vectors = np.asarray(emb.embed(list(data.entity_texts().values())), dtype=np.float32)
    queries = np.asarray(emb.embed([q.question for q in data.questions()]), dtype=np.float32)
    return vectors, queries


def _synth(folder: Path) -> tuple[np.ndarray, np.ndarray]:
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    col = pq.read_table(folder / "embeddings.entity_description.parquet", columns=["embedding"]).column(0)
    flat = pc.list_flatten(col).to_numpy(zero_copy_only=False).astype(np.float32)
    vectors = flat.reshape(len(col), -1)
    queries = np.asarray([q["vector"] for q in json.loads((folder / "queries.json").read_text())], np.float32)
    return vectors, queries


def _exact(vectors: np.ndarray, queries: np.ndarray) -> list[set[int]]:
    v = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    q = queries / np.linalg.norm(queries, axis=1, keepdims=True)
    scores = q @ v.T
    return [set(np.argsort(-row)[:K].tolist()) for row in scores]


def _query(driver, statement: str, **params):
    return driver.execute_query(statement, params).records


def _wipe(driver) -> None:
    with driver.session() as session:  # CALL ... IN TRANSACTIONS needs an auto-commit transaction
        session.run(f"MATCH (n:{LABEL}) CALL (n) {{ DETACH DELETE n }} IN TRANSACTIONS OF 10000 ROWS").consume()


def _measure(driver, vectors: np.ndarray, queries: np.ndarray, settings: list[tuple[int, int]]) -> list[dict]:
    _wipe(driver)
    for start in range(0, len(vectors), WRITE_BATCH):
        rows = [{"i": start + j, "v": v} for j, v in enumerate(vectors[start : start + WRITE_BATCH].tolist())]
        _query(
            driver,
            f"UNWIND $rows AS row CREATE (n:{LABEL} {{i: row.i}}) "
            "WITH n, row CALL db.create.setNodeVectorProperty(n, 'embedding', row.v)",
            rows=rows,
        )
    truth = _exact(vectors, queries)
    out = []
    for m, ef in settings:
        _query(driver, "DROP INDEX hnsw_bench IF EXISTS")
        t0 = time.perf_counter()
        _query(
            driver,
            f"CREATE VECTOR INDEX hnsw_bench FOR (n:{LABEL}) ON n.embedding OPTIONS {{indexConfig: "
            "{`vector.dimensions`: $d, `vector.similarity_function`: 'cosine', "
            "`vector.hnsw.m`: $m, `vector.hnsw.ef_construction`: $ef}}",
            d=int(vectors.shape[1]),
            m=m,
            ef=ef,
        )
        _query(driver, "CALL db.awaitIndex('hnsw_bench', 7200)")
        build_s = time.perf_counter() - t0
        hits: dict[int, list[float]] = {k: [] for k in ASKED}
        for q, want in zip(queries.tolist(), truth, strict=True):
            for k in ASKED:  # the best 10 of k asked (local search asks entity_top_k * entity_oversample = 30)
                rows = _query(
                    driver,
                    "CALL db.index.vector.queryNodes('hnsw_bench', $k, $q) YIELD node, score "
                    "RETURN node.i AS i ORDER BY score DESC LIMIT $top",
                    k=k,
                    q=q,
                    top=K,
                )
                hits[k].append(len({r["i"] for r in rows} & want) / K)
        out.append(
            {
                "m": m,
                "ef_construction": ef,
                "build_s": round(build_s, 2),
                "vectors_per_s": round(len(vectors) / build_s, 1),
                **{f"recall_at_10_of_{k}": round(float(np.mean(h)), 4) for k, h in hits.items()},
                **{f"min_recall_at_10_of_{k}": round(float(np.min(h)), 2) for k, h in hits.items()},
            }
        )
        print(json.dumps(out[-1]), flush=True)
    _query(driver, "DROP INDEX hnsw_bench IF EXISTS")
    _wipe(driver)
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--uri", required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--synth", type=Path, default=None, help="a synthetic index folder (bench/run/synth.py)")
    ap.add_argument("--settings", default="16:100,16:50,8:32", help="m:ef_construction pairs")
    ap.add_argument("--no-musique", action="store_true", help="only the synthetic entities (no bench cache needed)")
    a = ap.parse_args(argv)
    settings = [(int(m), int(ef)) for m, ef in (s.split(":") for s in a.settings.split(","))]
    import os

    import neo4j

    eng = common.engine(a.uri)
    driver = neo4j.GraphDatabase.driver(a.uri, auth=("neo4j", os.environ.get("NEO4J_PASSWORD", "driftgraph-bench")))
    sets = {} if a.no_musique else {"musique entities (real, local model)": _musique(eng)}
    if a.synth is not None:
        sets[f"{a.synth.name} entities (random unit vectors)"] = _synth(a.synth)
    rows = []
    for name, (vectors, queries) in sets.items():
        print(f"-- {name}: {len(vectors)} vectors, {len(queries)} queries", flush=True)
        rows.append(
            {
                "data": name,
                "vectors": len(vectors),
                "queries": len(queries),
                "k": K,
                "settings": _measure(driver, vectors, queries, settings),
            }
        )
    eng.close()
    driver.close()
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps({"rows": rows}, indent=1))
