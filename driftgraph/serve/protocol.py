"""uvicorn's h11 protocol with a deadline on request headers (``serve.header_timeout_s``).

uvicorn closes a keep-alive connection that stays idle after a response, but not one that connects and
sends nothing, or sends part of a request line or headers and stalls: such a connection stays open for as
long as the client likes, and enough of them exhaust the server's sockets (slowloris). Here a connection
that is waiting for a request (a new one, or a kept-alive one whose next request has begun to arrive) is
closed when its headers are not complete within the deadline. Bodies have their own deadline (``guard``).
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol


class HeaderDeadline(H11Protocol):
    """``H11Protocol`` that closes a connection whose request headers do not arrive in time."""

    header_timeout_s: float = 30.0
    _header_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        if self._waiting() and self._header_timer is None:
            self._arm()  # a kept-alive connection's next request has begun
        super().data_received(data)
        if not self._waiting():
            self._disarm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _waiting(self) -> bool:
        return self.cycle is None or self.cycle.response_complete

    def _arm(self) -> None:
        self._disarm()
        self._header_timer = self.loop.call_later(self.header_timeout_s, self._expire)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _expire(self) -> None:
        self._header_timer = None
        if self._waiting() and not self.transport.is_closing():
            self.transport.close()


def with_header_deadline(seconds: float) -> type[Any]:
    """The protocol class to hand ``uvicorn.Config(http=...)``, with this deadline."""
    return type("HeaderDeadlineProtocol", (HeaderDeadline,), {"header_timeout_s": seconds})
