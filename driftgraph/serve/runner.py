"""Engine calls off the event loop: bounded thread pools, a busy gate (429), deadlines (504) and cancellation.

Engine calls are blocking (the Neo4j driver, the openai client); each runs on a worker thread so the loop
keeps serving. ``start`` refuses at once with 429 when ``serve.max_concurrency`` questions are running rather
than queueing without bound. Every question carries a ``Deadline`` (``serve.request_timeout_s``, or the
request's own ``timeout_s`` when shorter): at the limit the caller gets 504 and the question is cancelled, so
it stops at its next check, is stored with ``stop_reason: deadline`` and frees its slot; a client that goes
away cancels it the same way (``cancelled``). Retrieval reads and pages run on a pool of their own
(``serve.max_page_concurrency``), so a flood of them neither takes question slots nor starves ``/readyz``.
Shutdown gets ``serve.shutdown_grace_s`` in total: questions still running near its end are cancelled, and
their traces written, before it is over.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from driftgraph.config import ServeConfig
from driftgraph.deadline import Deadline
from driftgraph.serve.errors import ApiError

T = TypeVar("T")
Disconnected = Callable[[], Awaitable[bool]]
POLL_S = 0.25  # how often a waiting request asks whether its client is still there
PAGE_QUEUE = 4  # page requests waiting per page thread before more get 429
TRACE_RESERVE_S = 5.0  # at most this much of the shutdown grace is kept for cancelled questions to store traces


class Runner:
    """Runs questions on at most ``max_concurrency`` threads and pages on their own pool; counts what runs."""

    def __init__(self, cfg: ServeConfig) -> None:
        self.cfg = cfg
        self._pool = concurrent.futures.ThreadPoolExecutor(cfg.max_concurrency, thread_name_prefix="driftgraph-q")
        self._pages = concurrent.futures.ThreadPoolExecutor(
            cfg.max_page_concurrency, thread_name_prefix="driftgraph-page"
        )
        self._lock = threading.Lock()
        self._running = 0
        self._paging = 0
        self._live: set[Deadline] = set()
        self._idle = threading.Event()
        self._idle.set()
        self._stop_by: float | None = None  # monotonic time by which shutdown must be over
        self.completed = 0

    @property
    def running(self) -> int:
        return self._running

    def deadline(self, timeout_s: float | None = None) -> Deadline:
        """A question's deadline: ``serve.request_timeout_s``, or the request's ``timeout_s`` when shorter."""
        limit = self.cfg.request_timeout_s
        return Deadline(limit if timeout_s is None else min(limit, timeout_s))

    def start(self, fn: Callable[..., T], *args: Any, deadline: Deadline | None = None) -> asyncio.Future[T]:
        """Submit ``fn(*args)`` or raise 429 when every slot is taken (never queues); ``deadline`` is the
        question's, cancelled if the server shuts down while it runs."""
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
            if deadline is not None:
                self._live.add(deadline)
        try:
            cfut = self._pool.submit(fn, *args)
        except RuntimeError:  # pool shut down: the server is stopping
            self._release(deadline)
            raise ApiError(503, "the server is shutting down", "shutting_down", "shutdown") from None
        cfut.add_done_callback(lambda _f: self._release(deadline))
        return asyncio.wrap_future(cfut)

    def _release(self, deadline: Deadline | None) -> None:
        with self._lock:
            self._running -= 1
            self.completed += 1
            if deadline is not None:
                self._live.discard(deadline)
            if self._running == 0:
                self._idle.set()

    async def wait(
        self, fut: asyncio.Future[T], deadline: Deadline | None = None, disconnected: Disconnected | None = None
    ) -> T:
        """The call's value. At the deadline (default ``serve.request_timeout_s`` from now): 504, and the
        question is cancelled. When ``disconnected()`` turns true: the question is cancelled (nobody reads it)."""
        deadline = deadline or self.deadline()
        while True:
            left = deadline.remaining()
            step = POLL_S if left is None else min(POLL_S, left)
            done, _ = await asyncio.wait({fut}, timeout=step if disconnected is not None else left)
            if done:
                return fut.result()
            if deadline.reason == "cancelled":  # the shutdown (or the client) stopped it: let it store its trace
                return await self._ending(fut)
            if deadline.reason is not None:
                deadline.cancel("deadline")  # wakes a call waiting on the model: the question ends now
                raise ApiError(504, self.timeout_message(deadline), "timeout", "timeout")
            if disconnected is not None and await disconnected():
                deadline.cancel("cancelled")
                raise ApiError(499, "the client closed the request", "cancelled", "client_closed")

    async def _ending(self, fut: asyncio.Future[T]) -> T:
        """A question cancelled by someone else ends at its next check and raises ``QuestionStopped`` itself
        (503 naming its stored retrieval); this waits for that, never reporting a cancel as a timeout."""
        done, _ = await asyncio.wait({fut}, timeout=TRACE_RESERVE_S)
        if done:
            return fut.result()
        raise ApiError(503, "the question was cancelled; its trace was not stored in time", "cancelled", "cancelled")

    def timeout_message(self, deadline: Deadline) -> str:
        """Which limit ended the question: the server's setting or the request's own ``timeout_s``."""
        if deadline.seconds is None or deadline.seconds >= self.cfg.request_timeout_s:
            limit = f"serve.request_timeout_s={self.cfg.request_timeout_s:g}s"
        else:
            limit = f"the request's timeout_s={deadline.seconds:g}s"
        return f"the question took longer than {limit}; it was stopped and stored with stop_reason deadline"

    async def call(self, fn: Callable[..., T], *args: Any) -> T:
        """``fn(*args)`` under a deadline of ``serve.request_timeout_s`` (MCP's non-question tools)."""
        return await self.wait(self.start(fn, *args))

    async def page(self, fn: Callable[..., T], *args: Any) -> T:
        """A retrieval read or page on the page pool: 429 when ``PAGE_QUEUE`` requests per thread already
        wait, 504 after ``serve.request_timeout_s``."""
        with self._lock:
            if self._paging >= self.cfg.max_page_concurrency * PAGE_QUEUE:
                raise ApiError(
                    429,
                    f"busy: {self._paging} retrieval reads waiting (serve.max_page_concurrency="
                    f"{self.cfg.max_page_concurrency})",
                    "rate_limit_exceeded",
                    "max_page_concurrency",
                    headers={"Retry-After": str(self.cfg.retry_after_s)},
                )
            self._paging += 1
        try:
            cfut = self._pages.submit(fn, *args)
        except RuntimeError:
            self._page_done()
            raise ApiError(503, "the server is shutting down", "shutting_down", "shutdown") from None
        cfut.add_done_callback(lambda _f: self._page_done())
        try:
            return await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(cfut)), self.cfg.request_timeout_s)
        except TimeoutError:
            limit = self.cfg.request_timeout_s
            message = f"the read took longer than serve.request_timeout_s={limit:g}s"
            raise ApiError(504, message, "timeout", "timeout") from None

    def _page_done(self) -> None:
        with self._lock:
            self._paging -= 1

    def begin_shutdown(self, grace_s: float) -> None:
        """SIGTERM arrived: the whole shutdown must end within ``grace_s`` from now. A timer cancels what still
        runs when only the trace reserve is left, so each cancelled question is stored before the end."""
        with self._lock:
            if self._stop_by is not None:
                return
            self._stop_by = time.monotonic() + grace_s
        reserve = min(TRACE_RESERVE_S, grace_s / 4)
        timer = threading.Timer(max(0.0, grace_s - reserve), self.cancel_all)
        timer.daemon = True
        timer.start()

    def cancel_all(self) -> None:
        with self._lock:
            live = list(self._live)
        for deadline in live:
            deadline.cancel("cancelled")

    def drain(self, grace_s: float) -> bool:
        """Wait (blocking) until no question runs or the shutdown's time is up (``begin_shutdown``, else
        ``grace_s`` from now, cancelling questions before the end); then stop the pools. True if drained."""
        self.begin_shutdown(grace_s)
        assert self._stop_by is not None
        drained = self._idle.wait(max(0.0, self._stop_by - time.monotonic()))
        self._pool.shutdown(wait=drained, cancel_futures=True)
        self._pages.shutdown(wait=False, cancel_futures=True)
        return drained
