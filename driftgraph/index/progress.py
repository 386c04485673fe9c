"""Rich progress bars on stderr for long indexing work, one per stage or batch round; a no-op when disabled
(the API's default, and tests), so callers never branch on it. When stderr is not a terminal (a log file, CI,
``nohup``) rich would show nothing until the end, so plain lines are written instead: a stage's count at every
tenth of its total and at least every ``PLAIN_EVERY_S`` seconds while it moves. A ``listener`` hears every
stage's (done, total) as it moves, bars or not: the document jobs of ``serve`` report it (serve/jobs.py)."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import Any

PLAIN_EVERY_S = 60.0


class _Lines:
    """Progress as plain lines on stderr: ``index: extract 40/216 (18%), 9m12s``."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tasks: dict[int, dict[str, Any]] = {}

    def add_task(self, name: str, total: int | None) -> int:
        with self._lock:
            tid = len(self._tasks)
            now = time.monotonic()
            self._tasks[tid] = {"name": name, "total": total, "done": 0, "t0": now, "said": now, "tenth": 0}
            return tid

    def advance(self, tid: int, n: int) -> None:
        with self._lock:
            t = self._tasks[tid]
            self._set(t, t["done"] + n)

    def update(self, tid: int, completed: int, total: int) -> None:
        with self._lock:
            t = self._tasks[tid]
            t["total"] = total
            self._set(t, completed)

    def _set(self, t: dict[str, Any], done: int) -> None:
        t["done"] = done
        now, total = time.monotonic(), t["total"]
        tenth = done * 10 // total if total else 0
        if tenth > t["tenth"] or now - t["said"] >= PLAIN_EVERY_S:
            t["tenth"], t["said"] = max(tenth, t["tenth"]), now
            elapsed = int(now - t["t0"])
            share = f" ({done * 100 // total}%)" if total else ""
            of = f"/{total}" if total else ""
            print(
                f"index: {t['name']} {done}{of}{share}, {elapsed // 60}m{elapsed % 60:02d}s",
                file=sys.stderr,
                flush=True,
            )

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass


# (stage, done, total or None when not known in advance)
StageListener = Callable[[str, int, int | None], None]


class Bars:
    def __init__(self, enabled: bool, label_width: int = 12, listener: StageListener | None = None) -> None:
        self._listener = listener
        self._lock = threading.Lock()  # stages advance from the extraction's worker threads
        self._bar: Any = None
        if enabled:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            console = Console(stderr=True)
            if not console.is_terminal:
                self._bar = _Lines()
                return
            self._bar = Progress(
                TextColumn(f"{{task.description:<{label_width}}}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=console,
            )

    def __enter__(self) -> Bars:
        if self._bar is not None:
            self._bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()

    def task(self, name: str, total: int | None) -> Callable[[], None]:
        """A bar for one stage (``total=None``: not known in advance); returns its advance-by-one function."""
        advance = self.counter(name, total)
        return lambda: advance(1)

    def counter(self, name: str, total: int | None) -> Callable[[int], None]:
        """Like ``task``, for stages that report whole batches: the function advances by its argument."""
        tid = self._bar.add_task(name, total=total) if self._bar is not None else None
        listener = self._listener
        if listener is None:
            return (lambda n: None) if tid is None else (lambda n: self._bar.advance(tid, n))
        done = [0]
        listener(name, 0, total)

        def advance(n: int) -> None:
            with self._lock:
                done[0] += n
                listener(name, done[0], total)
            if tid is not None:
                self._bar.advance(tid, n)

        return advance

    def done(self, name: str, total: int = 1) -> None:
        """A stage that finished in one go, shown complete (one step, so a plain log gets one line)."""
        self.counter(name, total)(total)

    def tracker(self, label: str, total: int) -> Callable[[int, int], None] | None:
        """A bar set to (done, of) by its caller, e.g. a batch round polling the provider; None when disabled."""
        if self._bar is None:
            return None
        tid = self._bar.add_task(label, total=total)
        return lambda done, of: self._bar.update(tid, completed=done, total=of)
