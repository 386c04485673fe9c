"""The ASGI layer in front of every route: bearer auth on protected paths, the request body limit and deadline.

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

from driftgraph.serve.auth import authorized, keys, needs_auth
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


class Guard:
    """Wraps the app: 401 without the key, 413 for a body over the limit, 408 for a body too slow to arrive."""

    def __init__(self, app: Any, *, api_key: str | None, max_body_bytes: int, body_timeout_s: float = 30.0) -> None:
        self.app = app
        # parsed once, not per request; None: no key configured, nothing guarded (the secret itself is not kept)
        self.keys: list[str] | None = keys(api_key) if api_key is not None else None
        self.max_body_bytes = max_body_bytes
        self.body_timeout_s = body_timeout_s

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        preflight = scope.get("method") == "OPTIONS"  # CORS preflights carry no credentials
        guarded = not preflight and needs_auth(scope.get("path", ""))
        if self.keys is not None and guarded and not authorized(headers.get("authorization"), self.keys):
            await _send_error(
                send,
                401,
                "missing or wrong API key: send Authorization: Bearer <DRIFTGRAPH_API_KEY>",
                "authentication_error",
                "invalid_api_key",
                [(b"www-authenticate", b"Bearer")],
            )
            return
        if scope.get("method") not in ("POST", "PUT", "PATCH"):
            await self.app(scope, receive, send)
            return
        declared = headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_body_bytes:
            await self._too_large(send)
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
            if size > self.max_body_bytes:
                await self._too_large(send)
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

    async def _too_large(self, send: Any) -> None:
        await _send_error(
            send,
            413,
            f"request body larger than serve.max_body_bytes={self.max_body_bytes}",
            "request_too_large",
            "body",
            [],
        )
