"""Engine calls off the event loop: a bounded thread pool, a busy gate (429) and a time limit (504).

Engine calls are blocking (the Neo4j driver, the openai client); each runs on a worker thread so the loop
keeps serving. ``start`` refuses at once with 429 when ``serve.max_concurrency`` calls are running rather
than queueing without bound. A call that outlives ``serve.request_timeout_s`` answers 504 but keeps its
slot until its thread ends (the thread cannot be killed and still spends tokens); shutdown waits for every
thread, so in-flight questions finish and store their traces.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Callable
from typing import Any, TypeVar

from driftgraph.config import ServeConfig
from driftgraph.serve.errors import ApiError

T = TypeVar("T")


class Runner:
    """Runs blocking calls on at most ``max_concurrency`` threads; counts what is in flight."""

    def __init__(self, cfg: ServeConfig) -> None:
        self.cfg = cfg
        self._pool = concurrent.futures.ThreadPoolExecutor(cfg.max_concurrency, thread_name_prefix="driftgraph-q")
        self._lock = threading.Lock()
        self._running = 0
        self._idle = threading.Event()
        self._idle.set()
        self.completed = 0

    @property
    def running(self) -> int:
        return self._running

    def start(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> asyncio.Future[T]:
        """Submit ``fn`` or raise 429 when every slot is taken (never queues)."""
        with self._lock:
            if self._running >= self.cfg.max_concurrency:
                raise ApiError(
                    429,
                    f"busy: {self._running} questions running (serve.max_concurrency={self.cfg.max_concurrency})",
                    "rate_limit_exceeded",
                    "max_concurrency",
                    headers={"Retry-After": str(self.cfg.retry_after_s)},
                )
            self._running += 1
            self._idle.clear()
        try:
            cfut = self._pool.submit(fn, *args, **kwargs)
        except RuntimeError:  # pool shut down: the server is stopping
            self._release(None)
            raise ApiError(503, "the server is shutting down", "shutting_down", "shutdown") from None
        cfut.add_done_callback(self._release)
        return asyncio.wrap_future(cfut)

    def _release(self, _: object) -> None:
        with self._lock:
            self._running -= 1
            self.completed += 1
            if self._running == 0:
                self._idle.set()

    async def wait(self, fut: asyncio.Future[T], timeout: float | None = None) -> T:
        """The call's value; 504 after ``timeout`` (default ``serve.request_timeout_s``)."""
        limit = self.cfg.request_timeout_s if timeout is None else timeout
        try:
            return await asyncio.wait_for(asyncio.shield(fut), limit)
        except TimeoutError:
            raise ApiError(
                504, f"the question took longer than serve.request_timeout_s={limit:g}s", "timeout", "timeout"
            ) from None

    async def call(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        return await self.wait(self.start(fn, *args, **kwargs))

    def drain(self, grace_s: float) -> bool:
        """Wait (blocking) until no call runs or ``grace_s`` passed; then stop the pool. True if drained."""
        drained = self._idle.wait(grace_s)
        self._pool.shutdown(wait=drained, cancel_futures=True)
        return drained
