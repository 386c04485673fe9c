"""`driftgraph doctor`: each part checked on its own, so one failure does not hide the others."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from driftgraph.errors import StoreError

if TYPE_CHECKING:
    from driftgraph.runtime import Runtime


def _check(fn: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    t0 = time.perf_counter()
    try:
        out = {"ok": True, **fn()}
    except Exception as err:  # doctor reports, it does not crash
        out = {"ok": False, "error": f"{type(err).__name__}: {err}"}
    out.setdefault("state", "ok" if out["ok"] else "fail")
    out["seconds"] = round(time.perf_counter() - t0, 3)
    return out


def run_checks(rt: Runtime) -> dict[str, Any]:
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
        }

    report = {"neo4j": _check(neo4j)}
    if report["neo4j"]["ok"] and routes(cfg.neo4j.uri):
        report["routing"] = _check(routing)
    report["schema"] = _check(schema) if report["neo4j"]["ok"] else {"ok": False, "error": "neo4j unreachable"}
    report["embedder"] = _check(embedder)
    report["tokenizer"] = _check(tokenizer)
    report["llm"] = _check(llm)
    return report


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
