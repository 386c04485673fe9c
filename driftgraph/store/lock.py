"""One index writer at a time per database, across processes and machines.

``index``, ``driftgraph documents`` and serve's document jobs each bring the database to their own corpus; two
at once would undo each other's work. So each takes the ``(:DriftgraphLock {name: 'index'})`` node before it
reads what is stored, and gives it back at the end. The holder renews it every third of ``LOCK_TTL_S`` from a
thread of its own; a process that dies stops renewing, and its lock lapses within ``LOCK_TTL_S``. On the
machine where it ran, the next writer need not wait: a holder whose process is gone (same machine id, no such
pid) is taken over at once, so a re-run after a crash or ``kill -9`` resumes straight away. Times are the
database server's (``timestamp()``), so clocks of different client machines do not matter.

A holder that cannot renew for a whole ``LOCK_TTL_S`` (Neo4j away), or finds its lock taken by another writer,
has lost it: the ``Lease`` it holds says so, and the writer calls ``Lease.check`` before each write stage, so it
stops with ``LockLost`` instead of writing beside the new holder.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from driftgraph.errors import IndexBusy, LockLost
from driftgraph.procs import alive

if TYPE_CHECKING:
    from driftgraph.store.db import Store

log = logging.getLogger("driftgraph.index")

LOCK_TTL_S = 120.0
INDEX_LOCK = "index"
_held = threading.local()  # this thread holds the lock already: an inner block (sync_corpus) takes nothing


class Lease:
    """The writer's hold on the lock: ``check`` raises ``LockLost`` once the renewal thread has seen it lost."""

    def __init__(self, what: str) -> None:
        self.what = what
        self._lost: str | None = None

    def lose(self, why: str) -> None:
        self._lost = why

    def check(self, before: str) -> None:
        """Call before each write stage: a lost lock means another writer may be changing the index now."""
        if self._lost is not None:
            raise LockLost(
                f"{self.what} stopped before {before}: the index writer lock was lost ({self._lost}); what was "
                "written so far is consistent per stage, run it again to finish"
            )


@contextmanager
def writer_lock(store: Store, what: str, ttl_s: float | None = None) -> Iterator[Lease]:
    """Hold the index writer lock for the block; ``IndexBusy`` (nothing changed) when another holder has it.
    Re-entrant within a thread: the document API holds it from reading the stored corpus to the end of the sync,
    and the inner block gets the same ``Lease``."""
    if getattr(_held, "depth", 0):
        _held.depth += 1
        try:
            yield _held.lease
        finally:
            _held.depth -= 1
        return
    ttl_s = LOCK_TTL_S if ttl_s is None else ttl_s
    owner = uuid.uuid4().hex
    holder = f"{what} (pid {os.getpid()} on {socket.gethostname()})"
    ttl_ms = int(ttl_s * 1000)
    me = {"owner": owner, "holder": holder, "machine": machine_id(), "pid": os.getpid(), "ttl_ms": ttl_ms}
    row = store.run("admin/lock_take", lock=INDEX_LOCK, stale=None, **me)[0]
    if not row["taken"] and row["machine"] == me["machine"] and not alive(row["pid"]):
        log.warning("the index writer lock of %s, whose process is gone, is taken over", row["holder"])
        row = store.run("admin/lock_take", lock=INDEX_LOCK, stale=row["owner"], **me)[0]
    if not row["taken"]:
        since = datetime.fromtimestamp(int(row["taken_at"] or 0) / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
        raise IndexBusy(
            f"another change to this database's index is running: {row['holder']}, since {since}; wait for it to "
            f"finish (if that process is gone, its lock lapses within {ttl_s:.0f} s)"
        )
    stop = threading.Event()
    lease = Lease(what)

    def renew() -> None:
        renewed = time.monotonic()
        while not stop.wait(ttl_s / 3):
            try:
                if not store.run("admin/lock_renew", lock=INDEX_LOCK, owner=owner, ttl_ms=ttl_ms):
                    log.warning("the index writer lock lapsed and was taken by another writer")
                    lease.lose("it lapsed and another writer took it")
                    return
                renewed = time.monotonic()
            except Exception as err:  # Neo4j away for a moment: the next renewal may reach it
                log.warning("could not renew the index writer lock: %s", err)
                if time.monotonic() - renewed >= ttl_s:  # it has lapsed: another writer may hold it now
                    lease.lose(f"not renewed for {ttl_s:.0f} s: {err}")
                    return

    thread = threading.Thread(target=renew, name="driftgraph-index-lock", daemon=True)
    thread.start()
    _held.depth, _held.lease = 1, lease
    try:
        yield lease
    finally:
        _held.depth, _held.lease = 0, None
        stop.set()
        thread.join(timeout=5)
        try:
            store.run("admin/lock_release", lock=INDEX_LOCK, owner=owner)
        except Exception as err:  # it lapses on its own
            log.warning("could not release the index writer lock (it lapses within %.0f s): %s", ttl_s, err)


def machine_id() -> str:
    """This machine, as the lock records it: ``/etc/machine-id`` where there is one (two containers or hosts may
    share a host name), else the host name."""
    try:
        with open("/etc/machine-id", encoding="ascii") as f:
            found = f.read().strip()
    except OSError:
        found = ""
    return f"{socket.gethostname()}/{found}" if found else socket.gethostname()
