"""``X-Request-Id``: one id per HTTP request, echoed on the response and written in the question's log line.

A client or proxy that sends ``X-Request-Id`` (letters, digits, ``._:-``, at most 128) keeps its id, so its
own logs and driftgraph's meet on it; anything else (absent, too long, other characters, which could forge
log lines) is replaced by a fresh one. Pure ASGI, outermost, so a 401 or 413 carries the id too.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

HEADER = b"x-request-id"
SCOPE_KEY = "driftgraph.request_id"
_VALID = re.compile(r"[A-Za-z0-9._:-]{1,128}")


def accepted(value: str | None) -> str:
    """The client's id when it is a safe one, else a new one."""
    if value is not None and _VALID.fullmatch(value):
        return value
    return uuid.uuid4().hex


class RequestId:
    """Sets ``scope["driftgraph.request_id"]`` and adds the ``X-Request-Id`` response header."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.inner(scope, receive, send)
            return
        sent = next((v.decode("latin-1") for k, v in scope.get("headers", []) if k.lower() == HEADER), None)
        rid = scope[SCOPE_KEY] = accepted(sent)

        async def tagged(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), (HEADER, rid.encode())]}
            await send(message)

        await self.inner(scope, receive, tagged)
