"""The one bounded parallel map (indexing stages, global map and rating calls): results in input order, not
finish order, so concurrency never changes an outcome; the first exception cancels what has not started."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


def parallel_map(
    fn: Callable[[T], R], items: Sequence[T], workers: int, on_done: Callable[[], None] | None = None
) -> list[R]:
    """``[fn(x) for x in items]`` on ``workers`` threads; an exception cancels what has not started."""
    if not items:
        return []
    if workers <= 1 or len(items) == 1:
        out = []
        for x in items:
            out.append(fn(x))
            if on_done is not None:
                on_done()
        return out
    pool = ThreadPoolExecutor(max_workers=workers)
    try:
        futures = [pool.submit(fn, x) for x in items]
        if on_done is not None:
            for f in futures:
                f.add_done_callback(lambda _f: on_done())
        done, _ = wait(futures, return_when=FIRST_EXCEPTION)
        for f in done:
            if f.exception() is not None:
                raise f.exception()  # type: ignore[misc]
        return [f.result() for f in futures]
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
