"""Questions never read a document change half-written: a readers-writer gate between them and the jobs.

A document job spends almost all its time asking the model (extraction, summaries, reports) before it writes
anything (``index.pipeline.sync_corpus``); questions meanwhile read the graph as it was. Only for the write
itself (graph, communities and reports, vectors, synonyms, indexes: seconds for one document) does the job
hold the gate alone: questions that arrive then wait for it, within their own deadline, and questions
already running finish first, so each question reads one whole graph, before the change or after it.

The writer is preferred (no new reader enters while it waits), so a steady stream of questions cannot
starve a job. This isolates the questions and the jobs of one ``serve`` process; a ``driftgraph documents``
or ``index`` run in another process writes as it goes (see docs/guides/serving.md).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from driftgraph.deadline import Deadline

WAIT_STEP_S = 0.25  # a waiting question looks at its deadline this often


class GraphGate:
    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._readers = 0
        self._writing = False
        self._writers_waiting = 0

    @contextmanager
    def reading(self, deadline: Deadline | None = None) -> Iterator[None]:
        """Held by a question for its whole run; waits while a change is written or about to be, and stops
        with the question's deadline (``QuestionStopped``) if that comes first."""
        with self._cond:
            while self._writing or self._writers_waiting:
                if deadline is not None:
                    deadline.check("waiting for a document change to be written")
                self._cond.wait(WAIT_STEP_S)
            self._readers += 1
        try:
            yield
        finally:
            with self._cond:
                self._readers -= 1
                self._cond.notify_all()

    @contextmanager
    def writing(self) -> Iterator[None]:
        """Held by a job while it writes its change: no question runs meanwhile."""
        with self._cond:
            self._writers_waiting += 1
            try:
                while self._writing or self._readers:
                    self._cond.wait()
            finally:
                self._writers_waiting -= 1
            self._writing = True
        try:
            yield
        finally:
            with self._cond:
                self._writing = False
                self._cond.notify_all()
