"""Indexes ONLINE before a writer returns, and a query that tells "populating" from "missing".

A vector or fulltext index created (or filled) moments ago may still be POPULATING: a query then fails
with "no such vector schema index" or finds nothing. ``import-graphrag`` and ``index`` therefore end with
``await_online`` (``CALL db.awaitIndexes``, ``neo4j.index_wait_s``), which raises one line naming the
indexes still populating and their progress. ``explain_index_error`` turns a query's index failure into
"index X is POPULATING (42%): retry in a moment" or "index X is missing: run import-graphrag or index".
"""

from __future__ import annotations

from typing import Any

from driftgraph.errors import StoreError
from driftgraph.store.db import Store


class IndexNotOnline(StoreError):
    """An index is still populating (or failed) after the wait, or when a query needs it."""


def index_states(store: Store) -> dict[str, dict[str, Any]]:
    return {r["name"]: r for r in store.read("schema/list_indexes")}


def _not_online(states: dict[str, dict[str, Any]], names: tuple[str, ...] | None = None) -> list[str]:
    out = []
    for name, row in sorted(states.items()):
        if names is not None and name not in names:
            continue
        if str(row.get("state")) != "ONLINE":
            pct = row.get("populationPercent")
            out.append(f"{name} {row.get('state')}" + (f" ({pct:.0f}%)" if isinstance(pct, int | float) else ""))
    return out


def await_online(store: Store, timeout_s: float) -> None:
    """Return once every index is ONLINE; ``IndexNotOnline`` naming the laggards after ``timeout_s``."""
    try:
        store.run("schema/await_indexes", timeout=max(1, int(round(timeout_s))))
    except StoreError as err:
        lagging = _not_online(index_states(store))
        raise IndexNotOnline(
            f"indexes not ONLINE after {timeout_s:g}s ({', '.join(lagging) or err}): the data is written; "
            "wait and query again, or raise neo4j.index_wait_s"
        ) from None


def explain_index_error(store: Store, err: StoreError, names: tuple[str, ...]) -> StoreError:
    """A query's index failure as "populating" (retry soon) or "missing" (build it); other errors unchanged."""
    text = str(err).lower()
    if "index" not in text:
        return err
    try:
        states = index_states(store)
    except StoreError:
        return err
    missing = [n for n in names if n not in states]
    if missing:
        return StoreError(
            f"index {', '.join(missing)} is missing: run `driftgraph import-graphrag` or `driftgraph index` "
            "(they create it), or check NEO4J_DATABASE"
        )
    lagging = _not_online(states, names)
    if lagging:
        return IndexNotOnline(f"index {', '.join(lagging)}: still populating after a write; retry in a moment")
    return err
