"""A thin handle on one Neo4j database: named statements, batched writes, readable errors.

Cluster- and Aura-ready: with a routing URI (``neo4j://``, ``neo4j+s://``) reads run in READ sessions, which the
driver sends to followers/read replicas, and writes go to the leader. Every Store of a process on the same server
shares one bookmark manager, so a query that follows an import or index sees its writes (causal consistency).
"""

from __future__ import annotations

import copy
import logging
import queue
import socket
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import contextmanager
from typing import Any, TypeVar

from driftgraph.config import Neo4jConfig
from driftgraph.deadline import Deadline
from driftgraph.errors import StoreError
from driftgraph.store import cypher

log = logging.getLogger(__name__)

T = TypeVar("T")


def _explain(err: Exception, cfg: Neo4jConfig) -> StoreError:
    from neo4j import exceptions as ex

    if isinstance(err, ex.AuthError):
        return StoreError(
            f"Neo4j at {cfg.uri} rejected user '{cfg.username}': wrong password? (set NEO4J_PASSWORD; the "
            "launcher's own is in the file `driftgraph neo4j status` names)"
        )
    if isinstance(err, ex.ServiceUnavailable):
        return StoreError(
            f"Neo4j is not reachable at {cfg.uri}: start one with `driftgraph neo4j start` "
            f"or `docker compose -f docker/compose.yml up -d`, or set NEO4J_URI"
        )
    if isinstance(err, ex.ClientError) and "DatabaseNotFound" in (err.code or ""):
        return StoreError(f"Neo4j at {cfg.uri} has no database '{cfg.database}' (set NEO4J_DATABASE)")
    if isinstance(err, ex.ClientError) and "TransactionTimedOut" in (err.code or ""):
        return StoreError(
            f"Neo4j at {cfg.uri} ended a statement that ran longer than neo4j.query_timeout_s="
            f"{cfg.query_timeout_s:g}s: raise it for heavy questions, or lower the expansion limits"
        )
    return StoreError(f"Neo4j error at {cfg.uri}: {err}")


ROUTING_SCHEMES = ("neo4j", "neo4j+s", "neo4j+ssc")
ANSWER_SLACK_S = 1.0  # a live server's own timeout error arrives first; past this, the server is not answering
WAITERS = 32  # statements of questions in flight at once on one process; more queue (and time out) behind them


class _Waiters:
    """The bounded pool a question's statements run on, so the question can stop waiting for a frozen server
    (the driver has no client-side read timeout): a stuck statement holds one of ``WAITERS`` daemon threads,
    never the question, the server's request slot or the process's exit (a ThreadPoolExecutor's threads are
    joined at exit, and a frozen server would hold that join)."""

    def __init__(self, size: int) -> None:
        self._jobs: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]]] = queue.SimpleQueue()
        self._size = size
        self._started = 0
        self._lock = threading.Lock()

    def submit(self, fn: Callable[[], T]) -> Future[T]:
        fut: Future[T] = Future()
        self._jobs.put((fn, fut))
        with self._lock:
            if self._started < self._size:
                self._started += 1
                threading.Thread(target=self._work, name="driftgraph-neo4j", daemon=True).start()
        return fut

    def _work(self) -> None:
        while True:
            fn, fut = self._jobs.get()
            if not fut.set_running_or_notify_cancel():
                continue
            try:
                fut.set_result(fn())
            except BaseException as err:  # noqa: BLE001 - handed to the waiting question as is
                fut.set_exception(err)


_WAITERS = _Waiters(WAITERS)
_BOOKMARKS: dict[tuple[str, str], Any] = {}
_BOOKMARKS_LOCK = threading.Lock()


def routes(uri: str) -> bool:
    """True when the URI scheme asks the driver to route (cluster, Aura; a single instance answers too)."""
    return uri.split("://", 1)[0].lower() in ROUTING_SCHEMES


def _bookmark_manager(cfg: Neo4jConfig) -> Any:
    """One bookmark manager per server and user in this process (thread-safe in the driver)."""
    from neo4j import GraphDatabase

    key = (cfg.uri, cfg.username)
    with _BOOKMARKS_LOCK:
        if key not in _BOOKMARKS:
            _BOOKMARKS[key] = GraphDatabase.bookmark_manager()
        return _BOOKMARKS[key]


class Store:
    def __init__(self, cfg: Neo4jConfig) -> None:
        from neo4j import GraphDatabase

        self.cfg = cfg
        self.deadline: Deadline | None = None  # a question's view: checked before, and bounding, each statement
        self.timeout_s: float | None = None  # a question's view: neo4j.query_timeout_s per statement
        self.round_trips = 0  # statements sent through this handle (a ``view`` counts its own)
        self._trips_lock = threading.Lock()
        self.write_retries = 0  # transactions run again after a transient failure (_retry_transient)
        self.bookmarks = _bookmark_manager(cfg)
        self._driver = GraphDatabase.driver(
            cfg.uri, auth=(cfg.username, cfg.password), notifications_min_severity="OFF"
        )
        try:
            self._driver.verify_connectivity()
        except Exception as err:
            self._driver.close()
            raise _explain(err, cfg) from None

    def view(self, deadline: Deadline | None = None, timeout_s: float | None = None) -> Store:
        """The same driver and bookmarks with a counter of its own: one per question, so a question's trace
        counts every statement it sent (schema check and trace write included) and no other question's. A view
        is never closed; the Store it came from is. A question's view carries its ``deadline`` and the
        statement timeout (``timeout_s``); index and import runs have neither: their writes take what they take."""
        other = copy.copy(self)
        other.round_trips = 0
        other._trips_lock = threading.Lock()
        other.deadline = deadline
        other.timeout_s = timeout_s
        return other

    def unbounded(self) -> Store:
        """This view without the question's deadline (its statement timeout stays): the trace of a stopped
        question is still written."""
        other = copy.copy(self)
        other.deadline = None
        return other

    def _count(self) -> None:
        with self._trips_lock:
            self.round_trips += 1

    def close(self) -> None:
        self._driver.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def routes(self) -> bool:
        return routes(self.cfg.uri)

    @contextmanager
    def _session(self, write: bool = True) -> Iterator[Any]:
        """A session in READ or WRITE access mode (routing picks readers or the leader), sharing bookmarks."""
        from neo4j import READ_ACCESS, WRITE_ACCESS
        from neo4j.exceptions import Neo4jError, ServiceUnavailable

        try:
            with self._driver.session(
                database=self.cfg.database,
                default_access_mode=WRITE_ACCESS if write else READ_ACCESS,
                bookmark_manager=self.bookmarks,
            ) as session:
                yield session
        except (Neo4jError, ServiceUnavailable) as err:
            raise _explain(err, self.cfg) from err

    def run(self, name: str, **params: Any) -> list[dict[str, Any]]:
        """Run a named statement in a managed transaction; rows as dicts. Every write statement is idempotent,
        so a transaction lost to a transient error runs again whole (``_retry_transient``)."""
        text = cypher.load(name)
        self._count()

        def once(timeout: float | None) -> list[dict[str, Any]]:
            with self._session() as session:
                rows: list[dict[str, Any]] = session.execute_write(_rows(text, params, timeout))
                return rows

        return self._retry_transient(lambda: self._bounded(name, once))

    def _retry_transient(self, work: Callable[[], T]) -> T:
        """``work`` again after a transient failure (a deadlock victim, a lock timeout), up to
        ``neo4j.write_retries`` times with a doubling wait. The driver retries such errors itself only when
        they reach it bare: one that ends a result inside the transaction function can come out as
        ``ResultFailedError`` (not retryable) with the deadlock as its cause, so the cause chain decides."""
        delay = self.cfg.write_backoff_s
        for attempt in range(self.cfg.write_retries + 1):
            try:
                return work()
            except Exception as err:
                if attempt >= self.cfg.write_retries or not transient(err):
                    raise
                self.write_retries += 1
                log.warning("Neo4j write lost to a transient error (%s): running it again in %.2f s", err, delay)
            time.sleep(delay)
            delay *= 2
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises

    def read(self, name: str, **params: Any) -> list[dict[str, Any]]:
        text = cypher.load(name)
        self._count()

        def once(timeout: float | None) -> list[dict[str, Any]]:
            with self._session() as session:
                rows: list[dict[str, Any]] = session.execute_read(_rows(text, params, timeout))
                return rows

        return self._bounded(name, once)

    def _bounded(self, name: str, work: Callable[[float | None], T]) -> T:
        """``work(timeout)`` with a question's limits: the server ends the transaction after the statement
        timeout (cut to the question's time left), and the question stops waiting one second later if the
        server sends nothing at all (a frozen process). Outside a question: ``work(None)``, here."""
        if self.timeout_s is None and self.deadline is None:
            return work(None)
        where = f"Neo4j statement {name}"
        if self.deadline is not None:
            self.deadline.check(where)
        limit = self.timeout_s if self.timeout_s is not None else self.cfg.query_timeout_s
        timeout = self.deadline.bound(limit) if self.deadline is not None else limit
        fut = _WAITERS.submit(lambda: work(timeout))
        try:
            return fut.result(timeout=timeout + ANSWER_SLACK_S)
        except FutureTimeout:
            fut.cancel()
            if self.deadline is not None and self.deadline.reason is not None:
                raise self.deadline.stopped(where) from None
            if not _listening(self.cfg.uri):  # gone, not frozen: the driver was still retrying its connection
                raise _explain(_unavailable(), self.cfg) from None
            raise StoreError(
                f"Neo4j at {self.cfg.uri} did not answer {name} within neo4j.query_timeout_s={limit:g}s: "
                "the server is frozen or overloaded (raise the setting for heavy questions)"
            ) from None
        except StoreError as err:
            if self.deadline is not None and self.deadline.reason is not None:  # the cut timeout fired
                raise self.deadline.stopped(where) from err
            raise

    def run_auto(self, name: str, **params: Any) -> None:
        """Every statement of the file in its own auto-commit transaction: schema scripts (Neo4j refuses schema
        and data changes in one transaction) and statements that batch themselves (``IN TRANSACTIONS``)."""
        with self._session() as session:
            for text in cypher.statements(name):
                self._count()
                session.run(text, params).consume()


def _listening(uri: str) -> bool:
    """Something accepts connections at the URI's address (a frozen process still does; a stopped one not)."""
    from urllib.parse import urlsplit

    parts = urlsplit(uri)
    try:
        with socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 7687), timeout=1.0):
            return True
    except OSError:
        return False


def _unavailable() -> Exception:
    from neo4j.exceptions import ServiceUnavailable

    return ServiceUnavailable("no answer")


def _rows(text: str, params: dict[str, Any], timeout: float | None) -> Callable[[Any], list[dict[str, Any]]]:
    """The transaction function of one statement; with ``timeout`` the server ends the transaction after it."""
    from neo4j import unit_of_work

    def work(tx: Any) -> list[dict[str, Any]]:
        return [r.data() for r in tx.run(text, params)]

    return work if timeout is None else unit_of_work(timeout=timeout)(work)


def transient(err: BaseException) -> bool:
    """A failure worth running the transaction again for: a retryable Neo4j error (``TransientError``:
    deadlock, lock timeout) anywhere in the cause chain (the driver or ``Store`` may have wrapped it)."""
    from neo4j.exceptions import Neo4jError

    seen: set[int] = set()
    cur: BaseException | None = err
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, Neo4jError) and cur.is_retryable():
            return True
        cur = cur.__cause__ or cur.__context__
    return False
