"""Bulk writes near the hardware: disjoint batches on parallel writer sessions, vectors straight from Arrow.

Why: a precomputed GraphRAG vector used to cost a Python float list built by ``to_pylist`` (twice: once to
check dimensions), then a pure-Python Bolt packing of 384 floats, then a wait while the server stored it. Now
the dimension check and the float32 matrix come from Arrow without per-value Python objects, the Bolt packing
runs in Rust (``neo4j-rust-ext``, picked up by the driver when installed), and ``writers`` sessions keep the
server busy while the client packs the next batch. Each batch is one managed transaction on its own session,
so a batch is all or nothing, and every statement used here is idempotent (``MERGE`` / set a property): a
failed or interrupted run is completed by running it again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

from driftgraph.errors import IngestError, StoreError
from driftgraph.store.db import Store

Row = dict[str, Any]


def parallel_write(
    store: Store,
    name: str,
    batches: Iterable[list[Row]],
    writers: int,
    on_batch: Callable[[int], None] | None = None,
    **params: Any,
) -> int:
    """Run ``name`` once per batch, ``writers`` transactions in flight; batches must touch disjoint nodes.

    At most ``2 * writers`` batches are held in memory. Returns the sum of the statement's ``written``."""
    written = 0
    done_rows = 0

    def one(batch: list[Row]) -> tuple[int, int]:
        result = store.run(name, rows=batch, **params)
        return (int(result[0]["written"]) if result else 0), len(batch)

    def collect(fut: Future[tuple[int, int]]) -> None:
        nonlocal written, done_rows
        try:
            w, n = fut.result()
        except StoreError as err:
            raise IngestError(
                f"writing {name} failed after {done_rows} rows were committed ({err}); "
                "nothing of the failed batch was written; the import is idempotent, re-run it to complete"
            ) from err
        written += w
        done_rows += n
        if on_batch is not None:
            on_batch(n)

    if writers <= 1:
        for batch in batches:
            fut: Future[tuple[int, int]] = Future()
            try:
                fut.set_result(one(batch))
            except StoreError as err:
                fut.set_exception(err)
            collect(fut)
        return written
    with ThreadPoolExecutor(max_workers=writers, thread_name_prefix="driftgraph-writer") as pool:
        pending: set[Future[tuple[int, int]]] = set()
        try:
            for batch in batches:
                pending.add(pool.submit(one, batch))
                if len(pending) >= 2 * writers:
                    finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for f in finished:
                        collect(f)
            for f in pending:
                collect(f)
        except BaseException:
            for f in pending:
                f.cancel()
            raise
    return written


def vector_dimensions(path: Path, column: str = "embedding") -> set[int]:
    """The distinct lengths of a parquet list column's non-null vectors, computed in Arrow."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    dims: set[int] = set()
    for batch in pq.ParquetFile(path).iter_batches(batch_size=65_536, columns=[column]):
        lengths = pc.list_value_length(batch.column(0)).drop_null()
        if len(lengths):
            mm = pc.min_max(lengths).as_py()
            dims.update({int(mm["min"]), int(mm["max"])})
    return dims


def vector_batches(
    path: Path, batch_size: int, id_map: dict[str, str] | None = None, id_column: str = "id"
) -> Iterator[list[Row]]:
    """``{id, embedding}`` rows from a parquet file of ids and vectors: float32 via numpy, not per-value Python.

    ``id_map`` translates file ids to node ids (rows without a mapping are dropped); null vectors are dropped."""
    import numpy as np
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    for batch in pq.ParquetFile(path).iter_batches(batch_size=batch_size, columns=[id_column, "embedding"]):
        vectors = batch.column(1)
        keep = pc.is_valid(vectors)
        if not pc.all(keep).as_py():
            batch = batch.filter(keep)
            vectors = batch.column(1)
        if not len(batch):
            continue
        ids = batch.column(0).to_pylist()
        flat = pc.list_flatten(vectors).to_numpy(zero_copy_only=False).astype(np.float32, copy=False)
        matrix = flat.reshape(len(ids), -1).tolist()
        rows = [{"id": i, "embedding": v} for i, v in zip(ids, matrix, strict=True)]
        if id_map is not None:
            rows = [{"id": id_map[r["id"]], "embedding": r["embedding"]} for r in rows if r["id"] in id_map]
        if rows:
            yield rows
