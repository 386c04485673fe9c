"""Who may call, and from where: the bearer key and the loopback rule.

With ``DRIFTGRAPH_API_KEY`` set, every ``/v1``, ``/mcp``, ``/retrievals`` and ``/metrics`` request needs
``Authorization: Bearer KEY`` (compared in constant time). The variable may list several keys separated by
commas, any of which is accepted: a key is rotated by serving old and new together until every client has
the new one. Without a key the server may only bind loopback: ``check_exposure`` refuses any other host
before a socket opens. No key is ever logged or echoed.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
from collections.abc import Sequence

from driftgraph.errors import ConfigError

API_KEY_ENV = "DRIFTGRAPH_API_KEY"
PROTECTED = ("/v1", "/mcp", "/retrievals", "/metrics")


def api_key_from_env() -> str | None:
    """The variable as set (one key, or several separated by commas); None when it holds no key."""
    raw = os.environ.get(API_KEY_ENV, "")
    return raw.strip() if keys(raw) else None


def keys(api_key: str) -> list[str]:
    """The keys a ``DRIFTGRAPH_API_KEY`` value lists: comma-separated, surrounding spaces and empty parts dropped."""
    return [k.strip() for k in api_key.split(",") if k.strip()]


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_exposure(host: str, api_key: str | None) -> None:
    """Refuse a non-loopback bind without a key (one line, names the setting)."""
    if api_key is None and not is_loopback(host):
        raise ConfigError(
            f"serve.host={host} is not loopback: set {API_KEY_ENV} to serve beyond this machine "
            "(without a key driftgraph binds 127.0.0.1 only)"
        )


def needs_auth(path: str) -> bool:
    return any(path == p or path.startswith(p + "/") for p in PROTECTED)


def authorized(header: str | None, accepted: Sequence[str]) -> bool:
    """``Authorization: Bearer KEY`` for one of the ``accepted`` keys (``keys()`` of the variable, parsed once
    by the caller), each compared in constant time (all of them, so the time does not say which one matched)."""
    if not header:
        return False
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer":
        return False
    sent = token.strip().encode()
    matches = [hmac.compare_digest(sent, key.encode()) for key in accepted]
    return any(matches)
