"""`driftgraph doctor`: each part checked on its own, so one failure does not hide the others.

``run_checks`` returns a ``DoctorReport`` of ``Check`` results; ``to_dict()`` gives the document
``doctor --json`` prints, key for key and in the same order (``tests/test_summary_golden.py`` holds it). What a
check found (a server's version, the embedder's dimensions ...) differs per part and stays a JSON mapping.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from driftgraph.errors import StoreError

if TYPE_CHECKING:
    from driftgraph.runtime import Runtime


@dataclass(frozen=True)
class Check:
    """One part's result. ``state`` is ok, fail or empty (a database with nothing in it yet: a state to act on,
    not a fault); ``error`` says what failed, ``note`` what to do; ``seconds`` is None for a check not run."""

    ok: bool
    details: dict[str, Any] = field(default_factory=dict)  # what the check found (JSON values)
    error: str | None = None
    state: str | None = None
    note: str | None = None
    seconds: float | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"ok": self.ok, **self.details}
        for key in ("error", "state", "note", "seconds"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out


@dataclass(frozen=True)
class DoctorReport:
    """Every part's check; ``routing`` only for routed (``neo4j://``, ``neo4j+s://``) URIs."""

    neo4j: Check
    schema: Check
    embedder: Check
    tokenizer: Check
    llm: Check
    routing: Check | None = None

    @property
    def ok(self) -> bool:
        return all(check.ok for _, check in self.parts())

    def parts(self) -> Iterator[tuple[str, Check]]:
        """(name, check) in the order doctor prints them."""
        yield "neo4j", self.neo4j
        if self.routing is not None:
            yield "routing", self.routing
        yield from (("schema", self.schema), ("embedder", self.embedder), ("tokenizer", self.tokenizer))
        yield "llm", self.llm

    def to_dict(self) -> dict[str, Any]:
        """The ``doctor --json`` document."""
        return {name: check.to_dict() for name, check in self.parts()}


def _check(fn: Callable[[], dict[str, Any]]) -> Check:
    t0 = time.perf_counter()
    try:
        facts = dict(fn())
    except Exception as err:  # doctor reports, it does not crash
        return Check(ok=False, error=f"{type(err).__name__}: {err}", state="fail", seconds=_since(t0))
    ok = bool(facts.pop("ok", True))
    error, state, note = (facts.pop(key, None) for key in ("error", "state", "note"))
    return Check(ok, facts, error, state or ("ok" if ok else "fail"), note, _since(t0))


def _since(t0: float) -> float:
    return round(time.perf_counter() - t0, 3)


def run_checks(rt: Runtime) -> DoctorReport:
    from driftgraph.store.db import routes

    cfg = rt.config

    def neo4j() -> dict[str, Any]:
        row = rt.store.read("admin/version")[0]
        return {
            "version": row["version"],
            "edition": row["edition"],
            "uri": cfg.neo4j.uri,
            "database": cfg.neo4j.database,
            "browser": _browser_url(rt),
        }

    def routing() -> dict[str, Any]:
        """The servers the driver routes to and their roles (only for neo4j:// and neo4j+s:// URIs)."""
        row = rt.store.read("admin/routing_table", db=cfg.neo4j.database)[0]
        roles: dict[str, list[str]] = {}
        for server in row["servers"]:
            for address in server["addresses"]:
                roles.setdefault(address, []).append(server["role"])
        return {
            "servers": "; ".join(f"{addr} ({'+'.join(r)})" for addr, r in sorted(roles.items())),
            "ttl_s": row["ttl"],
            "table": [{"address": addr, "roles": r} for addr, r in sorted(roles.items())],
        }

    def schema() -> dict[str, Any]:
        from driftgraph.store.schema import schema_status

        status = schema_status(rt.store)
        if status["embedder"] and (status["embedder"], status["dimensions"]) != (
            rt.embedder.model_id,
            rt.embedder.dimensions,
        ):
            status["ok"] = False
            status["error"] = (
                f"built with {status['embedder']} ({status['dimensions']}-d), config uses "
                f"{rt.embedder.model_id} ({rt.embedder.dimensions}-d)"
            )
        if not status["ok"] and "error" not in status and status["schema_version"] is None and _empty(rt):
            # nothing imported or indexed yet: a state to act on, not a fault
            status.update(ok=True, state="empty", note="empty — run import-graphrag or index")
        if not status["ok"] and "error" not in status:
            status["error"] = "schema not initialised: import or index something first"
        status.update(entry_threshold(rt))
        return status

    def embedder() -> dict[str, Any]:
        vec = rt.embedder.embed(["driftgraph doctor"])
        return {"provider": cfg.embeddings.provider, "model": rt.embedder.model_id, "dimensions": int(vec.shape[1])}

    def tokenizer() -> dict[str, Any]:
        from driftgraph.llm.tokenizer import get_tokenizer

        tok = get_tokenizer(cfg.tokenizer.encoding)
        return {"encoding": tok.name, "tokens_in_probe": len(tok.encode("hello world"))}

    def llm() -> dict[str, Any]:
        from driftgraph.llm.client import llm_configured, make_openai_client
        from driftgraph.llm.probe import probe_structured
        from driftgraph.llm.retry import with_retries

        if not llm_configured(cfg.llm):
            return {"configured": False, "model": cfg.llm.model}
        client = make_openai_client(cfg.llm)
        models = with_retries(lambda: client.models.list(), cfg.llm)
        return {
            "configured": True,
            "model": cfg.llm.model,
            "base_url": cfg.llm.base_url,
            "models": [m.id for m in models.data][:20],
            "structured_output": probe_structured(cfg.llm).line(),  # the response format runs will send
        }

    reached = _check(neo4j)
    return DoctorReport(
        neo4j=reached,
        routing=_check(routing) if reached.ok and routes(cfg.neo4j.uri) else None,
        schema=_check(schema) if reached.ok else Check(ok=False, error="neo4j unreachable"),
        embedder=_check(embedder),
        tokenizer=_check(tokenizer),
        llm=_check(llm),
    )


def entry_threshold(rt: Runtime) -> dict[str, Any]:
    """The ``local.min_similarity`` a question on this index gets and where it comes from (``config``,
    ``calibrated`` or ``fallback``), with the index's stored calibration (its measurement time left out)."""
    from driftgraph.query.local.entry import resolve_thresholds
    from driftgraph.store.calibration import read_calibration

    cal = read_calibration(rt.store)
    stored = {"min_similarity": cal.min_similarity, "report_min_similarity": cal.report_min_similarity} if cal else None
    gates = resolve_thresholds(rt.config.local, stored)
    details = None
    if cal is not None:
        details = {k: v for k, v in cal.to_dict().items() if k != "computed_at"}
    return {"min_similarity": gates.min_similarity, "min_similarity_source": gates.source, "calibration": details}


def _empty(rt: Runtime) -> bool:
    """No documents, chunks, entities or communities: the database holds no index of ours (yet)."""
    row = rt.store.read("admin/counts")[0]
    return not any(row[k] for k in ("documents", "chunks", "entities", "communities", "claims"))


def _browser_url(rt: Runtime) -> str | None:
    """Neo4j Browser's address when the server has an HTTP connector (the launcher's, or Docker's), else None."""
    try:
        settings = {r["name"]: r["value"] for r in rt.store.read("admin/http_settings")}
    except StoreError:  # SHOW SETTINGS not allowed (Aura) or an older server: no URL, not a failure
        return None
    if str(settings.get("server.http.enabled", "false")).lower() != "true":
        return None
    address = str(settings.get("server.http.listen_address") or "")
    host, _, port = address.rpartition(":")
    if not port.isdigit():
        return None
    host = "127.0.0.1" if host in ("", "localhost", "0.0.0.0", "::") else host.strip("[]")
    return f"http://{host}:{port}/browser/"
