"""Trace retention for a long-running server (``serve.trace_retention_days``; 0, the default, keeps all).

Every question stores a ``(:Retrieval)`` with its INCLUDED and DROPPED edges, so a server that answers for
months grows Neo4j without end unless someone runs ``driftgraph trace prune`` from cron. With a retention set,
``serve`` prunes itself: at start and every ``serve.trace_prune_interval_s``, retrievals older than the
retention go (in batches, ``cypher/trace/prune.cypher``), off the event loop. A failed prune (Neo4j away) is
logged and counted, and the next interval tries again; it never stops the server.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta

from driftgraph.api import Engine
from driftgraph.config import ServeConfig
from driftgraph.serve.metrics import Metrics

log = logging.getLogger("driftgraph.serve")


async def prune_forever(engine: Engine, cfg: ServeConfig, metrics: Metrics | None) -> None:
    """Prune now, then every interval, until cancelled (at shutdown)."""
    keep = timedelta(days=cfg.trace_retention_days)
    while True:
        try:
            pruned = await asyncio.to_thread(engine.prune_retrievals, keep)
        except Exception as err:
            log.warning(
                "trace retention: prune failed (%s: %s); retrying in %gs",
                type(err).__name__,
                err,
                cfg.trace_prune_interval_s,
            )
            if metrics is not None:
                metrics.prune_failures.inc()
        else:
            if pruned:
                log.info("trace retention: deleted %d retrievals older than %g days", pruned, cfg.trace_retention_days)
            if metrics is not None:
                metrics.pruned.inc(pruned)
        await asyncio.sleep(cfg.trace_prune_interval_s)
