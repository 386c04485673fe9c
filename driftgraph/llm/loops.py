"""Noticing a reply that has started repeating itself, so a stream can be cut instead of paid to the end.

Small local models decoding greedily (temperature 0) fall into cycles in long structured replies: an
extraction lists the same ten entities over and over until ``max_tokens``. Such a reply costs minutes on a
CPU and, cut at the cap, is invalid JSON; its repair request loops the same way. A cycle shows as the reply's
last ``window`` characters having appeared ``repeats`` times before, verbatim: a run of whole records, titles,
keys and descriptions included, which a model that is not looping does not write twice.
"""

from __future__ import annotations

LOOPED = "loop"  # the finish reason of a reply the loop guard cut
WINDOW = 256  # characters: longer than one repeated description, shorter than one cycle of records
REPEATS = 2  # earlier occurrences of the window: one repeat can be a coincidence, two is a cycle
EVERY = 64  # characters between checks


class LoopWatch:
    """Fed a streamed reply piece by piece; ``feed`` turns True once the reply is cycling."""

    def __init__(self, window: int = WINDOW, repeats: int = REPEATS, every: int = EVERY) -> None:
        self._parts: list[str] = []
        self._size = 0
        self._checked = 0
        self._window, self._repeats, self._every = window, repeats, every
        self.looping = False

    def feed(self, piece: str) -> bool:
        self._parts.append(piece)
        self._size += len(piece)
        if self.looping or self._size - self._checked < self._every or self._size < self._window * (self._repeats + 1):
            return self.looping
        self._checked = self._size
        text = "".join(self._parts)
        self._parts = [text]
        tail, seen, at = text[-self._window :], 0, 0
        body = text[: -self._window]
        while seen < self._repeats:
            found = body.find(tail, at)
            if found == -1:
                break
            seen, at = seen + 1, found + 1
        self.looping = seen >= self._repeats
        return self.looping
