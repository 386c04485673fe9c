"""A thin handle on one Neo4j database: named statements, batched writes, readable errors.

Cluster- and Aura-ready: with a routing URI (``neo4j://``, ``neo4j+s://``) reads run in READ sessions, which the
driver sends to followers/read replicas, and writes go to the leader. Every Store of a process on the same server
shares one bookmark manager, so a query that follows an import or index sees its writes (causal consistency).
"""

from __future__ import annotations

import copy
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from driftgraph.config import Neo4jConfig
from driftgraph.errors import StoreError
from driftgraph.store import cypher

log = logging.getLogger(__name__)

T = TypeVar("T")


def _explain(err: Exception, cfg: Neo4jConfig) -> StoreError:
    from neo4j import exceptions as ex

    if isinstance(err, ex.AuthError):
        return StoreError(f"Neo4j at {cfg.uri} rejected user '{cfg.username}': wrong password? (set NEO4J_PASSWORD)")
    if isinstance(err, ex.ServiceUnavailable):
        return StoreError(
            f"Neo4j is not reachable at {cfg.uri}: start one with `driftgraph neo4j start` "
            f"or `docker compose -f docker/compose.yml up -d`, or set NEO4J_URI"
        )
    if isinstance(err, ex.ClientError) and "DatabaseNotFound" in (err.code or ""):
        return StoreError(f"Neo4j at {cfg.uri} has no database '{cfg.database}' (set NEO4J_DATABASE)")
    return StoreError(f"Neo4j error at {cfg.uri}: {err}")


ROUTING_SCHEMES = ("neo4j", "neo4j+s", "neo4j+ssc")
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

    def view(self) -> Store:
        """The same driver and bookmarks with a counter of its own: one per question, so a question's trace
        counts every statement it sent (schema check and trace write included) and no other question's. A view
        is never closed; the Store it came from is."""
        other = copy.copy(self)
        other.round_trips = 0
        other._trips_lock = threading.Lock()
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

        def once() -> list[dict[str, Any]]:
            with self._session() as session:
                rows: list[dict[str, Any]] = session.execute_write(lambda tx: [r.data() for r in tx.run(text, params)])
                return rows

        return self._retry_transient(once)

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
        with self._session() as session:
            rows: list[dict[str, Any]] = session.execute_read(lambda tx: [r.data() for r in tx.run(text, params)])
            return rows

    def run_auto(self, name: str, **params: Any) -> None:
        """Every statement of the file in its own auto-commit transaction: schema scripts (Neo4j refuses schema
        and data changes in one transaction) and statements that batch themselves (``IN TRANSACTIONS``)."""
        with self._session() as session:
            for text in cypher.statements(name):
                self._count()
                session.run(text, params).consume()


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
