"""Who may call, and from where: the bearer key and the loopback rule.

With ``DRIFTGRAPH_API_KEY`` set, every ``/v1``, ``/mcp``, ``/retrievals`` and ``/metrics`` request needs
``Authorization: Bearer KEY`` (compared in constant time). Without a key the server may only bind loopback:
``check_exposure`` refuses any other host before a socket opens. The key is never logged or echoed.
"""

from __future__ import annotations

import hmac
import ipaddress
import os

from driftgraph.errors import ConfigError

API_KEY_ENV = "DRIFTGRAPH_API_KEY"
PROTECTED = ("/v1", "/mcp", "/retrievals", "/metrics")


def api_key_from_env() -> str | None:
    key = os.environ.get(API_KEY_ENV, "").strip()
    return key or None


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


def authorized(header: str | None, api_key: str) -> bool:
    """``Authorization: Bearer KEY``, compared in constant time."""
    if not header:
        return False
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(token.strip().encode(), api_key.encode())
