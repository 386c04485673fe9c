"""When a question must stop: its time limit, or a cancel from outside (a 504, a client gone, shutdown).

One ``Deadline`` travels with a question's Runtime to every part that waits: the chat client bounds each HTTP
request by the time left and checks before every attempt and retry wait; the store bounds each statement's
transaction the same way; the modes check between stages. Whatever notices first raises ``QuestionStopped``
with the reason (``deadline`` or ``cancelled``), and the question is stored with that ``stop_reason`` and the
cost spent so far (``api.Engine.query``). A Deadline without a limit that nobody cancels never fires: the CLI
and the Python API pay nothing for it.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import TypeVar

from driftgraph.errors import QuestionStopped

T = TypeVar("T")

MIN_WAIT_S = 0.05  # a bounded wait never asks for less (a zero timeout means "none" to some clients)


class Deadline:
    """A time limit in seconds (None: none) plus a cancel switch; thread-safe, shared by one question's calls."""

    def __init__(self, seconds: float | None = None, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = seconds
        self._clock = clock
        self._end = None if seconds is None else clock() + seconds
        self._cancelled = threading.Event()
        self._reason: str | None = None
        self._lock = threading.Lock()
        self._on_cancel: list[Callable[[], None]] = []

    def cancel(self, reason: str = "cancelled") -> None:
        """Stop the question at its next check; ``reason`` is ``cancelled`` (client, operator) or ``deadline``.
        What was registered with ``on_cancel`` runs now, in the caller's thread (it wakes waiting calls)."""
        with self._lock:
            if self._cancelled.is_set():
                return
            self._reason = reason
            self._cancelled.set()
            hooks, self._on_cancel = self._on_cancel, []
        for hook in hooks:
            with contextlib.suppress(Exception):  # a hook that fails must not keep the others from running
                hook()

    def on_cancel(self, hook: Callable[[], None]) -> Callable[[], None]:
        """Run ``hook`` when the question is cancelled (at once if it already was); returns its remover."""
        with self._lock:
            if not self._cancelled.is_set():
                self._on_cancel.append(hook)
                return lambda: self._forget(hook)
        hook()
        return lambda: None

    def _forget(self, hook: Callable[[], None]) -> None:
        with self._lock:
            if hook in self._on_cancel:
                self._on_cancel.remove(hook)

    def run(self, fn: Callable[[], T], where: str) -> T:
        """``fn()``, given up on when the question stops: a blocking call (an HTTP request) cannot be
        interrupted from outside, so under a limit it runs on a thread of its own and the question leaves at
        once on a cancel or at its limit; the abandoned call ends by its own timeout, which ``bound`` keeps
        within the limit. Without a limit nobody waits on a clock, so ``fn`` runs here."""
        self.check(where)
        if self.seconds is None:
            return fn()
        fut: Future[T] = Future()

        def target() -> None:
            try:
                fut.set_result(fn())
            except BaseException as err:  # noqa: BLE001 - handed to the waiting question as is
                fut.set_exception(err)

        wake = threading.Event()
        fut.add_done_callback(lambda _f: wake.set())
        forget = self.on_cancel(wake.set)
        threading.Thread(target=target, name="driftgraph-call", daemon=True).start()
        try:
            left = self.remaining()
            wake.wait(None if left is None else left + MIN_WAIT_S)
        finally:
            forget()
        if fut.done():
            return fut.result()
        raise self.stopped(where, self.reason or "deadline")

    @property
    def reason(self) -> str | None:
        """``deadline`` or ``cancelled`` once the question must stop, else None."""
        if self._cancelled.is_set():
            return self._reason
        if self._end is not None and self._clock() >= self._end:
            return "deadline"
        return None

    def remaining(self) -> float | None:
        """Seconds left (0 once stopped), None without a limit."""
        if self._cancelled.is_set():
            return 0.0
        return None if self._end is None else max(0.0, self._end - self._clock())

    def bound(self, timeout: float) -> float:
        """``timeout`` cut to the time left, so no single wait outlives the question."""
        left = self.remaining()
        return timeout if left is None else max(MIN_WAIT_S, min(timeout, left))

    def check(self, where: str) -> None:
        """Raise ``QuestionStopped`` if the question must stop; ``where`` names the stage for the message."""
        reason = self.reason
        if reason is not None:
            raise self.stopped(where, reason)

    def stopped(self, where: str, reason: str | None = None) -> QuestionStopped:
        reason = reason or self.reason or "cancelled"
        if reason == "deadline":
            limit = f"{self.seconds:g}s" if self.seconds is not None else "its time limit"
            return QuestionStopped(f"the question ran out of time ({limit}) at {where}", reason, where)
        return QuestionStopped(f"the question was cancelled at {where}", reason, where)

    def sleep(self, seconds: float, where: str = "a retry wait") -> None:
        """A retry's wait, cut short by a cancel or the limit (then ``QuestionStopped`` naming ``where``)."""
        self.check(where)
        left = self.remaining()
        wait = seconds if left is None else min(seconds, left)
        self._cancelled.wait(max(0.0, wait))
        self.check(where)
