"""Rich progress bars on stderr for long indexing work, one per stage or batch round; a no-op when disabled
(``--json`` runs and tests), so callers never branch on it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class Bars:
    def __init__(self, enabled: bool, label_width: int = 12) -> None:
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
        if self._bar is None:
            return lambda n: None
        tid = self._bar.add_task(name, total=total)
        return lambda n: self._bar.advance(tid, n)

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
