"""Rich progress bars on stderr for long indexing work, one per stage or batch round; a no-op when disabled
(``--json`` runs and tests), so callers never branch on it. A ``listener`` hears every stage's (done, total)
as it moves, bars or not: the document jobs of ``serve`` report it (serve/jobs.py)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

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

            self._bar = Progress(
                TextColumn(f"{{task.description:<{label_width}}}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=Console(stderr=True),
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
        """A stage that finished in one go, shown complete."""
        step = self.task(name, total)
        for _ in range(total):
            step()

    def tracker(self, label: str, total: int) -> Callable[[int, int], None] | None:
        """A bar set to (done, of) by its caller, e.g. a batch round polling the provider; None when disabled."""
        if self._bar is None:
            return None
        tid = self._bar.add_task(label, total=total)
        return lambda done, of: self._bar.update(tid, completed=done, total=of)
