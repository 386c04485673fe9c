"""Retrievals in Neo4j: write, read, list and prune stored traces, and the Browser Cypher that draws one.

The trace itself is data (``query/trace.py`` builds the rows); this module only moves rows to and from the
database, every statement a file under ``cypher/trace/``::

    (:Retrieval {id, mode, query, seed, params, stop_reason, cost, created_at, trace})
        -[:INCLUDED {source, item_id, rank, tokens, hop}]->(x)
        -[:DROPPED  {source, item_id, reason, rank, hop}]->(x)

``x`` is the Chunk / __Entity__ / __Community__ / Claim node; a relationship item points at the relationship's
start entity and carries the relationship id in ``item_id``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from driftgraph.config.secrets import redact
from driftgraph.errors import RetrievalNotFound

if TYPE_CHECKING:
    from driftgraph.store.db import Store

Rows = Mapping[str, Sequence[Mapping[str, Any]]]
log = logging.getLogger(__name__)
_JSON_FIELDS = ("params", "cost", "trace")


def write_retrieval(store: Store, props: Mapping[str, Any], rows: Rows) -> None:
    """The Retrieval node and its INCLUDED/DROPPED edges in one round trip (``cypher/trace/write.cypher``);
    idempotent: a repeated write of the same id updates the properties and adds no edge."""
    written = store.run("trace/write", retrieval=dict(props), **{k: list(v) for k, v in rows.items()})
    warn_unlinked(str(props["id"]), rows, written)


def write_steps(store: Store, retrieval_id: str, steps: Sequence[Mapping[str, Any]], items: Rows) -> None:
    """DRIFT's step tree and each step's INCLUDED edges in one round trip (``cypher/trace/drift_steps``)."""
    written = store.run(
        "trace/drift_steps", retrieval_id=retrieval_id, steps=list(steps), **{k: list(v) for k, v in items.items()}
    )
    warn_unlinked(retrieval_id, items, written)


def warn_unlinked(retrieval_id: str, rows: Rows, written: Sequence[Mapping[str, Any]]) -> None:
    """Say so when a first write linked fewer of ``rows`` (the item rows sent, per label) than it was given (an
    item whose node is not in the graph): the answer stands, but its stored trace is short, and the user
    reading it in Neo4j should know."""
    if not written or not written[0]["linked"]:
        return  # a repeated write of the same retrieval links nothing, by design
    sent = sum(len(found) for found in rows.values())
    missing = sent - int(written[0]["item_rows"])
    if missing > 0:
        log.warning(
            "retrieval %s: %d of %d trace items have no node in the graph and were not linked to it",
            retrieval_id,
            missing,
            sent,
        )


def read_retrieval(store: Store, retrieval_id: str) -> dict[str, Any]:
    """The stored retrieval: properties (JSON fields decoded) and its INCLUDED/DROPPED edges."""
    rows = store.read("trace/read", id=retrieval_id)
    if not rows:
        raise RetrievalNotFound(f"no retrieval with id '{retrieval_id}' (list them with `driftgraph trace list`)")
    ret = dict(rows[0]["retrieval"])
    for key in _JSON_FIELDS:
        if isinstance(ret.get(key), str):
            ret[key] = json.loads(ret[key])
    if isinstance(ret.get("params"), dict):  # a trace stored before secrets were masked serves none either
        ret["params"] = redact(ret["params"])
    return {"retrieval": ret, "edges": rows[0]["edges"]}


def list_retrievals(store: Store, limit: int) -> list[dict[str, Any]]:
    """The newest ``limit`` retrievals, newest first (``cypher/trace/list``)."""
    return store.read("trace/list", limit=limit)


def prune_retrievals(store: Store, older_than: timedelta, dry_run: bool = False) -> int:
    """Delete retrievals (and their DRIFT steps) created before now - older_than; returns how many."""
    cutoff = (datetime.now(UTC) - older_than).isoformat()
    count = int(store.read("trace/prune_count", cutoff=cutoff)[0]["retrievals"])
    if count and not dry_run:
        store.run_auto("trace/prune", cutoff=cutoff)
    return count


def browser_cypher(retrieval_id: str) -> str:
    """The Cypher a user pastes into Neo4j Browser to see one retrieved subgraph.

    Display only: ``$id`` of ``cypher/trace/subgraph.cypher`` becomes a quoted literal (escaped), so the text
    runs as pasted; driftgraph itself only ever executes the parameterised file.
    """
    from driftgraph.store import cypher

    literal = "'" + retrieval_id.replace("\\", "\\\\").replace("'", "\\'") + "'"
    return cypher.load("trace/subgraph").replace("$id", literal)
