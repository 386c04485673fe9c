"""The ASGI layer in front of every route: the Host check, bearer auth on protected paths, the request body
limit and deadline.

A request whose ``Host`` is not a name the server serves (loopback names, plus ``serve.allowed_hosts``) is 421
on every route before anything else: a web page whose DNS name rebinds to 127.0.0.1 is same-origin to itself
but still sends its own name as ``Host``, so it cannot read retrievals or spend on questions. A POST, PUT or
PATCH whose body is not declared JSON is 415: a page on another origin can send a form or text/plain body
without a CORS preflight, never a JSON one.

Pure ASGI (not ``BaseHTTPMiddleware``) so server-sent events and the MCP transport stream through
untouched. A body is read in full up to ``serve.max_body_bytes`` before the route sees it; more is 413. A
body that has not arrived in full within ``serve.body_timeout_s`` is 408 and the connection is closed, so a
client that sends a few bytes and stalls cannot hold a connection (and what it pins) without end.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from driftgraph.config import ServeConfig
from driftgraph.serve.auth import ALL_SCOPES, NO_KEY_SCOPES, STATE_KEY, ApiKey, keys, match_key, needs_auth
from driftgraph.serve.errors import error_body

Scope = dict[str, Any]
Message = dict[str, Any]


async def _send_error(send: Any, status: int, message: str, type_: str, code: Any, headers: list[Any]) -> None:
    body = json.dumps(error_body(message, type_, code)).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), *headers],
        }
    )
    await send({"type": "http.response.body", "body": body})


LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


def host_name(value: str) -> str:
    """The name part of a ``Host`` header, lower case, without the port (``[::1]:8765`` -> ``[::1]``)."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[: value.find("]") + 1] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


def served_hosts(bind: str, configured: list[str] | tuple[str, ...]) -> frozenset[str]:
    """The Host names a server bound to ``bind`` answers: loopback names, the bind address itself when it is a
    specific one (not 0.0.0.0 / ::), and ``serve.allowed_hosts`` (``*`` = any)."""
    names = set(LOOPBACK_NAMES)
    if bind not in ("0.0.0.0", "::", ""):
        names.add(f"[{bind}]" if ":" in bind else bind.lower())
    names.update(host_name(h) if h != "*" else "*" for h in configured)
    return frozenset(names)


def mcp_security(cfg: ServeConfig) -> Any:
    """The MCP SDK's own Host and Origin check, told the same names this Guard serves: left to itself it allows
    only loopback names on a loopback bind, so a name in ``serve.allowed_hosts`` would pass the Guard and then
    be refused at ``/mcp`` alone. ``*`` (any host) leaves the check to the Guard."""
    from mcp.server.transport_security import TransportSecuritySettings

    names = served_hosts(cfg.host, cfg.allowed_hosts)
    if "*" in names:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    loopback = [f"http://{n}:*" for n in LOOPBACK_NAMES]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[h for n in sorted(names) for h in (n, f"{n}:*")],
        allowed_origins=[*loopback, *(f"http://{n}" for n in LOOPBACK_NAMES), *cfg.cors_origins],
    )


UPLOADS = "/v1/documents"  # the one route family that also takes multipart/form-data, up to max_upload_bytes


def is_upload(path: str) -> bool:
    return path == UPLOADS or path.startswith(UPLOADS + "/")


def is_multipart(content_type: str) -> bool:
    return content_type.split(";", 1)[0].strip().lower() == "multipart/form-data"


def is_json(content_type: str) -> bool:
    """``application/json`` or ``application/*+json``, any parameters: what every POST route reads. A form or
    text/plain POST (what another origin's page can send without a CORS preflight) is refused."""
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))


class Guard:
    """Wraps the app: 421 for a Host it does not serve, 401 without the key, 415 for a body that is not JSON,
    413 for a body over the limit, 408 for a body too slow to arrive."""

    def __init__(
        self,
        app: Any,
        *,
        api_key: str | None,
        max_body_bytes: int,
        body_timeout_s: float = 30.0,
        hosts: frozenset[str] = frozenset(LOOPBACK_NAMES),
        scoped: list[ApiKey] | None = None,
        max_upload_bytes: int | None = None,
        database: str | None = None,
    ) -> None:
        self.app = app
        self.hosts = hosts
        # parsed once, not per request; None: no key configured, nothing guarded and read-only. A key setting
        # given but holding no key guards everything (fails closed)
        every = [ApiKey(k, ALL_SCOPES) for k in keys(api_key or "")] + list(scoped or [])
        self.keys: list[ApiKey] | None = every if api_key is not None or scoped else None
        self.max_body_bytes = max_body_bytes
        self.max_upload_bytes = max(max_upload_bytes or max_body_bytes, max_body_bytes)
        self.database = database  # the one this server serves; a key bound to another is refused
        self.body_timeout_s = body_timeout_s

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        host = host_name(headers.get("host", ""))
        if "*" not in self.hosts and host not in self.hosts:
            shown = host[:100] or "(none)"
            await _send_error(
                send,
                421,
                f"Host '{shown}' is not served here: add it to serve.allowed_hosts to accept it",
                "misdirected_request",
                "host",
                [],
            )
            return
        preflight = scope.get("method") == "OPTIONS"  # CORS preflights carry no credentials
        path = scope.get("path", "")
        guarded = not preflight and needs_auth(path)
        scopes = NO_KEY_SCOPES
        if self.keys is not None and guarded:
            key = match_key(headers.get("authorization"), self.keys)
            if key is None:
                await _send_error(
                    send,
                    401,
                    "missing or wrong API key: send Authorization: Bearer <DRIFTGRAPH_API_KEY>",
                    "authentication_error",
                    "invalid_api_key",
                    [(b"www-authenticate", b"Bearer")],
                )
                return
            if key.database is not None and key.database != self.database:
                bound = f"this key is bound to database '{key.database}', and this server serves '{self.database}'"
                await _send_error(send, 403, bound, "permission_error", "database", [])
                return
            scopes = key.scopes
            if path == "/metrics" and "admin" not in scopes:
                await _send_error(
                    send, 403, "/metrics needs a key with the admin scope", "permission_error", "scope", []
                )
                return
        scope.setdefault("state", {})[STATE_KEY] = scopes  # routes read it (serve/routes_documents.py)
        if scope.get("method") not in ("POST", "PUT", "PATCH"):
            await self.app(scope, receive, send)
            return
        upload = is_upload(path)
        content_type = headers.get("content-type", "")
        # a form another origin's page can send without a preflight only reaches the document routes, which
        # refuse it unless it carries a key with the write scope (and a key is never sent cross-origin unasked)
        if not is_json(content_type) and not (upload and is_multipart(content_type)):
            await _send_error(
                send,
                415,
                "request bodies must be JSON: send Content-Type: application/json",
                "unsupported_media_type",
                "content-type",
                [],
            )
            return
        limit = self.max_upload_bytes if upload else self.max_body_bytes
        declared = headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await self._too_large(send, limit)
            return
        chunks: list[bytes] = []
        size = 0
        deadline = time.monotonic() + self.body_timeout_s
        while True:
            try:
                message = await asyncio.wait_for(receive(), max(deadline - time.monotonic(), 0.0))
            except TimeoutError:
                late = f"request body not received in full within serve.body_timeout_s={self.body_timeout_s:g}s"
                await _send_error(send, 408, late, "request_timeout", "body", [(b"connection", b"close")])
                return
            if message["type"] == "http.disconnect":
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                await self._too_large(send, limit)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            following: Message = await receive()
            return following

        await self.app(scope, replay, send)

    async def _too_large(self, send: Any, limit: int) -> None:
        setting = "max_upload_bytes" if limit != self.max_body_bytes else "max_body_bytes"
        await _send_error(
            send,
            413,
            f"request body larger than serve.{setting}={limit}",
            "request_too_large",
            "body",
            [],
        )
