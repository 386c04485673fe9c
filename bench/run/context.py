"""What the measuring parts share: where they write, the database of one invocation, and how they start the
driftgraph and GraphRAG workers (``python -m bench <worker part> ... --out FILE``, each in its own process)."""

from __future__ import annotations

import json
import os
import shutil
import sys
from typing import Any

from bench.paths import CACHE, RAW, RESULTS
from bench.run import data, env, machine, neo4j

__all__ = ["RAW", "RESULTS"]

WORK = CACHE / "runs"
BUDGETS = (2000, 4000, 8000, 12000)
# The machine is shared (2 cores, 24 GB, Neo4j and other work on it): a measured client that grows past this
# is stopped and reported as not fitting, rather than left to the OOM killer.
MAX_CLIENT_RSS_MB = 12_000
SPEED_BUDGET = 8000


def log(msg: str) -> None:
    print(msg, flush=True)


def save(name: str, payload: dict[str, Any], ctx: Context) -> None:
    RAW.mkdir(parents=True, exist_ok=True)
    payload = {"machine": machine.describe(), "command": ctx.command, **payload}
    (RAW / f"{name}.json").write_text(json.dumps(payload, indent=1))


class Context:
    """What the parts of one invocation share: arguments, the database, and what is already measured."""

    def __init__(self, args: Any) -> None:
        self.args = args
        self.command = "python -m bench " + " ".join(sys.argv[1:])
        self._db = None
        self._db_cm = None
        self.loaded: str | None = None  # which data set the database holds
        self.local_done = False
        self.imported: dict | None = None
        WORK.mkdir(parents=True, exist_ok=True)

    @property
    def db(self) -> neo4j.Database:
        if self._db is None:
            a = self.args
            self._db_cm = neo4j.database(a.neo4j_uri, a.neo4j_port, a.heap, a.page_cache, log, a.java)
            self._db = self._db_cm.__enter__()
            os.environ["NEO4J_PASSWORD"] = self._db.password
        return self._db

    def close(self) -> None:
        if self._db_cm is not None:
            self._db_cm.__exit__(None, None, None)
            self._db_cm = self._db = None

    def fresh_database(self) -> None:
        """An empty database before a big import: the bench's own launcher is stopped and its data dir wiped
        (deleting a million nodes through Cypher takes minutes and leaves gigabytes of transaction logs);
        an external ``--neo4j-uri`` is left to the importer's reset."""
        self.loaded = None
        if self.args.neo4j_uri:
            return
        self.close()
        shutil.rmtree(CACHE / "neo4j", ignore_errors=True)


def dg(part: str, args: list[str], name: str, timeout: float | None = None, cap: float | None = None) -> dict:
    """A driftgraph worker part, in this interpreter (the project's virtualenv)."""
    return env.run_driftgraph(part, args, WORK / f"{name}.json", log, timeout, cap)


def gr(part: str, args: list[str], name: str, timeout: float | None = None, cap: float | None = None) -> dict:
    """A GraphRAG worker part, in the baseline virtualenv."""
    return env.run_baseline(part, args, WORK / f"{name}.json", log, timeout, cap)


def import_musique(ctx: Context) -> dict:
    res = dg("imports", ["--uri", ctx.db.uri, "--root", str(data.MUSIQUE)], "import_musique")
    ctx.loaded = "musique"
    return res
