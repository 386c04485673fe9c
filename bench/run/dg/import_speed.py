"""Import speed on musique: the Neo4j write phase (no embedding) and the embedding rate (items/s).

    NEO4J_URI=bolt://127.0.0.1:7701 NEO4J_PASSWORD=... python -m bench import-speed [--embed-sample N]

WIPES the driftgraph data of the Neo4j it points at (``--reset``). Steps: a reset import without
embeddings (phases timed by the importer itself), a second import that must change nothing, then the
embed phase's own path (read pending page -> embed -> write vectors) on ``--embed-sample`` items per kind
(0 = skip, -1 = everything still pending; the whole of musique is ~25k texts, minutes on 2 cores).
Self-contained: it uses only driftgraph's public API and store helpers.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

from bench.paths import SHARED

DEFAULT_DATA = SHARED / "musique"
TABLE_LABEL = {
    "documents": "Document",
    "text_units": "Chunk",
    "entities": "__Entity__",
    "communities": "__Community__",
}


def _parquet_rows(folder: Path) -> dict[str, int]:
    import pyarrow.parquet as pq

    return {
        name: pq.ParquetFile(folder / f"{name}.parquet").metadata.num_rows
        for name in (*TABLE_LABEL, "relationships")
        if (folder / f"{name}.parquet").is_file()
    }


def _embed_rate(engine, kind: str, sample: int, page_size: int) -> dict:
    from driftgraph.store import ingest

    embed_s = write_s = 0.0
    done = 0
    for page in ingest.pending_embeddings(engine.store, kind, page_size):
        if 0 <= sample <= done:
            break
        if sample >= 0:
            page = page[: sample - done]
        t0 = time.perf_counter()
        vectors = engine.embedder.embed([r["text"] for r in page])
        t1 = time.perf_counter()
        ingest.write_embeddings(
            engine.store, kind, [{"id": r["id"], "embedding": v} for r, v in zip(page, vectors, strict=True)], page_size
        )
        write_s += time.perf_counter() - t1
        embed_s += t1 - t0
        done += len(page)
    total = embed_s + write_s
    return {
        "items": done,
        "embed_seconds": round(embed_s, 2),
        "write_seconds": round(write_s, 2),
        "items_per_second": round(done / total, 1) if total else None,
        "embed_only_items_per_second": round(done / embed_s, 1) if embed_s else None,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--batch-size", type=int, default=None, help="rows per write tx (default: config)")
    parser.add_argument("--embed-sample", type=int, default=1024, help="items per kind (0 skip, -1 all)")
    parser.add_argument("--out", type=Path, default=None, help="also write the result JSON here")
    args = parser.parse_args(argv)

    from driftgraph.api import open_engine

    result: dict = {
        "data": str(args.data),
        "machine": {"cpus": os.cpu_count(), "load_avg": os.getloadavg(), "python": platform.python_version()},
    }
    with open_engine() as engine:
        t0 = time.perf_counter()
        first = engine.import_graphrag(args.data, reset=True, embed=False, batch_size=args.batch_size).to_dict()
        result["reset_import_wall_seconds"] = round(time.perf_counter() - t0, 2)
        result["phase_seconds"] = first["phase_seconds"]
        result["table_seconds"] = {k: v["seconds"] for k, v in first["tables"].items()}
        result["write_phase_seconds"] = first["phase_seconds"]["write"]
        rows = _parquet_rows(args.data)
        result["counts_match_parquet"] = all(
            first["counts"][label] == rows[t] for t, label in TABLE_LABEL.items() if t in rows
        ) and first["relationships"] == rows.get("relationships")
        result["counts"] = {**first["counts"], "RELATED": first["relationships"]}
        t0 = time.perf_counter()
        second = engine.import_graphrag(args.data, embed=False, batch_size=args.batch_size).to_dict()
        result["reimport_seconds"] = round(time.perf_counter() - t0, 2)
        result["reimport_write_phase_seconds"] = second["phase_seconds"]["write"]
        result["reimport_noop"] = (
            second["counts"] == first["counts"] and second["relationships"] == first["relationships"]
        )
        if args.embed_sample:
            page = engine.config.import_.embed_batch_size
            result["embedder"] = {"model": engine.embedder.model_id, "dimensions": engine.embedder.dimensions}
            result["embedding"] = {
                k: _embed_rate(engine, k, args.embed_sample, page) for k in ("entity", "chunk", "community")
            }
            items = sum(v["items"] for v in result["embedding"].values())
            seconds = sum(v["embed_seconds"] + v["write_seconds"] for v in result["embedding"].values())
            result["embedding_items_per_second"] = round(items / seconds, 1) if seconds else None
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n", encoding="utf-8")
    print(
        f"\nmusique write phase (no embedding): {result['write_phase_seconds']} s "
        f"(goal < 60 s; whole reset import {result['reset_import_wall_seconds']} s); "
        f"re-import no-op: {result['reimport_noop']}; "
        f"embedding: {result.get('embedding_items_per_second')} items/s"
    )
